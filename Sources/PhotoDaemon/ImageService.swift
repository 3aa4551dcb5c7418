import Dispatch
import PhotoImaging
import PhotoMetadata
import PhotoModel
import PhotoStore
import PhotoSystem
import PhotoWire
#if canImport(Glibc)
import Glibc
#endif

/// Image requests (PhotoKit's image manager for Linux): renders an asset at a size into the
/// cache and answers with the file's path — a degraded image first when one is at hand.
///
/// Requests never run on the sort queue: `workers` threads render what clients wait for, one
/// more thread at the lowest priority pre-renders what `images.startCaching` asked for. Both
/// run at a lower priority than indexing. One render per image: every request for the same
/// file version, size and mode waits on the same job. Answers go through each client's
/// connection, in order: a degraded notification is never sent after its final answer.
final class ImageService: Service {
    struct Options: Sendable {
        var cacheDirectory: PathBytes
        /// Bytes of images the cache keeps (least recently used go first).
        var cacheBytes: Int64 = 1 << 30
        /// Images whose header claims more pixels are refused (`imageFailed`, `tooLarge`).
        var pixelLimit = 100_000_000
        /// Threads rendering requested images.
        var workers = 2
        var jpegQuality = 85
        /// The group that may read the cache (`--socket-group`).
        var group: UInt32?

        init(cacheDirectory: PathBytes) { self.cacheDirectory = cacheDirectory }
    }

    enum Delivery: String, CaseIterable, Sendable {
        /// A degraded image first (a notification), when there is one, then the final one.
        case opportunistic
        /// Only the final image.
        case highQuality
        /// One answer as soon as possible: a degraded image if one is at hand, else the final.
        case fast
    }

    /// The largest side a request may ask for.
    static let maxSide = 16_384
    /// Requests one client may have waiting at once.
    static let maxPendingPerClient = 256
    /// Images waiting to be pre-rendered, over all clients.
    static let maxCachingJobs = 100_000
    /// Assets per `images.startCaching` or `images.stopCaching`.
    static let maxCachingIDs = 10_000

    /// What is rendered: one version of one file, at one size and mode.
    struct Target: Sendable {
        var asset: AssetID
        var path: PathBytes
        var fileKey: String
        var size: PixelSize
        var mode: ContentMode
        var orientation: Orientation
        /// The index's format of the file (`jpeg`, `heic`, ...): which thumbnail it may carry.
        var format: String
        /// A video: its image is its poster frame.
        var isVideo: Bool
        var stem: String
        /// The size the final image will have (the target when the index knows no pixel size).
        var finalSize: PixelSize
    }

    private struct WaiterKey: Hashable {
        var client: Int
        var id: RPCID
    }

    /// A request that waits for its image.
    private struct Waiting {
        var stem: String
        /// `opportunistic` only: the stand-in step has not finished. The final answer, if it
        /// is ready first, is held (`heldFinal`) and sent right after the stand-in: the
        /// notification always comes first when there is a stand-in, never after.
        var standInPending: Bool
        var heldFinal: [UInt8]?
    }

    private struct Job {
        var target: Target
        var waiters: [WaiterKey] = []
        /// Clients that asked for it with `images.startCaching`.
        var cachers: Set<Int> = []
        var started = false
        /// In `queue` for the workers (false: in `idleQueue`, pre-caching only).
        var queued: Bool
    }

    private struct State {
        var jobs: [String: Job] = [:]
        var queue = StemQueue()
        var idleQueue = StemQueue()
        /// Each waiting request.
        var waiting: [WaiterKey: Waiting] = [:]
        var perClient: [Int: Int] = [:]
        var stopping = false
        var stats = Stats()
    }

    /// Counters for `library.status`.
    struct Stats: Sendable {
        var requests = 0
        var cacheHits = 0
        var rendered = 0
        var degraded = 0
        var failed = 0
        var cancelled = 0
        var shared = 0
        var preRendered = 0
    }

    let database: Database
    let cache: ImageCache
    let renderer: ImageRenderer
    let options: Options
    let logger: Logger
    private let state = Locked(State())
    private let work = DispatchSemaphore(value: 0)
    private let idleWork = DispatchSemaphore(value: 0)
    private let degradedQueue = DispatchQueue(label: "photod.images.degraded")
    private let maintenance = DispatchQueue(label: "photod.images.maintenance", qos: .utility)
    private let connections = Locked<Callback<Int, ClientConnection?>?>(nil)
    /// The worker threads that have not ended.
    private let workersRunning = DispatchGroup()

    init(database: Database, options: Options, logger: Logger) {
        self.database = database
        self.options = options
        self.logger = logger
        cache = ImageCache(root: options.cacheDirectory, capacity: options.cacheBytes, group: options.group, logger: logger)
        renderer = ImageRenderer(pixelLimit: options.pixelLimit)
    }

    /// Starts the image workers and the pre-caching thread.
    func start() {
        for i in 0..<max(1, options.workers) {
            workersRunning.enter()
            spawnThread("photod-image-\(i)") { [self] in
                // At the process's priority: above a scan's readers (5 nice steps below), so
                // that a request made during an index is answered first.
                while let stem = next(idle: false) { render(stem) }
                workersRunning.leave()
            }
        }
        workersRunning.enter()
        spawnThread("photod-precache") { [self] in
            lowerThreadPriority(nice: 19)
            while let stem = next(idle: true) { render(stem) }
            workersRunning.leave()
        }
    }

    /// Where the service finds connections (the socket server, once it exists).
    func attach(_ lookup: @escaping @Sendable (Int) -> ClientConnection?) {
        connections.withLock { $0 = Callback(lookup) }
    }

    private func connection(_ id: Int) -> ClientConnection? { connections.withLock { $0 }?(id) }

    var stats: Stats { state.withLock { $0.stats } }

    /// Ends the worker threads (after the job each is on) and waits for them, and for the
    /// cache's maintenance.
    func stop() {
        state.withLock { $0.stopping = true }
        for _ in 0..<max(1, options.workers) { work.signal() }
        idleWork.signal()
        workersRunning.wait()
        maintenance.sync {}
        degradedQueue.sync {}
    }

    // MARK: Requests

    /// `images.request`: answers at once from the cache, or queues a render and answers when
    /// it is done (with a degraded image first, for `opportunistic`). Runs on the client's
    /// queue; every answer is sent through `send`, which the caller must not call again.
    func request(asset id: AssetID, target size: PixelSize, mode: ContentMode, delivery: Delivery, client: Int,
                 requestID: RPCID) throws(RPCError) {
        state.withLock { $0.stats.requests += 1 }
        let target: Target
        do {
            target = try resolve(id, size: size, mode: mode)
        } catch {
            // The file cannot be looked at (an unmounted disk, an offline share): the image made
            // of it last time still shows the photo.
            if error.code == RPCErrorCode.imageFailed.rawValue,
               let last = cache.anyVersion(asset: id, mode: mode.rawValue, target: size) {
                state.withLock { $0.stats.cacheHits += 1 }
                reply(client, requestID, .success(Self.result(last, asset: id, degraded: false)))
                return
            }
            throw error
        }
        if let hit = cache.lookup(target.stem) {
            state.withLock { $0.stats.cacheHits += 1 }
            reply(client, requestID, .success(Self.result(hit, target: target, degraded: false)))
            return
        }
        if delivery == .fast, let degraded = degradedImage(for: target, smallerThanFinal: false) {
            state.withLock { $0.stats.degraded += 1 }
            reply(client, requestID, .success(Self.result(degraded, target: target, degraded: true)))
            return
        }
        let key = WaiterKey(client: client, id: requestID)
        try state.withLock { s throws(RPCError) in
            guard s.waiting[key] == nil else {
                throw .invalidRequest("request id \(requestID) is already waiting for an image on this connection")
            }
            guard s.perClient[client, default: 0] < Self.maxPendingPerClient else {
                throw .overloaded("\(Self.maxPendingPerClient) image requests of this connection are waiting; "
                                  + "cancel some or wait for their answers")
            }
            s.perClient[client, default: 0] += 1
            s.waiting[key] = Waiting(stem: target.stem, standInPending: delivery == .opportunistic)
            if var job = s.jobs[target.stem] {
                job.waiters.append(key)
                s.stats.shared += 1
                if !job.queued && !job.started {
                    // Pre-caching had it at idle priority: someone waits for it now (its entry
                    // in `idleQueue` is skipped when reached).
                    s.queue.append(target.stem)
                    job.queued = true
                    work.signal()
                }
                s.jobs[target.stem] = job
            } else {
                s.jobs[target.stem] = Job(target: target, waiters: [key], queued: true)
                s.queue.append(target.stem)
                work.signal()
            }
        }
        if delivery == .opportunistic {
            degradedQueue.async { [self] in sendStandIn(for: target, to: key) }
        }
    }

    /// `images.cancel`: the waiting request gets `cancelled` (before this call's own answer);
    /// false if it was not waiting (answered already, or never sent). A render nobody else
    /// waits for is dropped if it has not started.
    func cancel(client: Int, requestID: RPCID) -> Bool {
        let key = WaiterKey(client: client, id: requestID)
        let found = state.withLock { s -> Bool in
            guard let stem = s.waiting.removeValue(forKey: key)?.stem else { return false }
            s.perClient[client, default: 1] -= 1
            s.stats.cancelled += 1
            if var job = s.jobs[stem] {
                job.waiters.removeAll { $0 == key }
                s.jobs[stem] = job
                dropIfUnwanted(stem, &s)
            }
            return true
        }
        guard found else { return false }
        // On the client's queue already (this runs in its request): the answer goes out now,
        // before `images.cancel`'s own.
        connection(client)?.enqueue(RPCResponse.failure(id: requestID, error: .cancelled("request \(requestID) was cancelled"))
            .encodedLine())
        return true
    }

    /// The client disconnected: its requests and its pre-caching end.
    func disconnected(client: Int) {
        state.withLock { s in
            for (key, value) in s.waiting where key.client == client {
                s.waiting[key] = nil
                if var job = s.jobs[value.stem] {
                    job.waiters.removeAll { $0.client == client }
                    s.jobs[value.stem] = job
                }
            }
            s.perClient[client] = nil
            var touched = Set(s.waiting.filter { $0.key.client == client }.map(\.value.stem))
            for (stem, var job) in s.jobs where job.cachers.contains(client) {
                job.cachers.remove(client)
                s.jobs[stem] = job
                touched.insert(stem)
            }
            for stem in touched { dropIfUnwanted(stem, &s) }
        }
    }

    /// Assets changed or left the library (a commit's change set; called on the sort queue,
    /// so the work is done elsewhere): images of a file version that is gone are removed —
    /// all of them for an asset that was purged or moved to Recently Deleted.
    func assetsChanged(updated: [String], deleted: [String]) {
        maintenance.async { [self] in
            for text in deleted {
                if let id = AssetID(rawValue: text) { cache.remove(asset: id) }
            }
            for text in updated {
                guard let id = AssetID(rawValue: text), cache.hasImages(of: id) else { continue }
                let path = (try? database.read { try $0.asset(id: id) })??.path
                let current = path.flatMap { try? FileStat.of($0) }.map(ImageCache.fileKey)
                cache.remove(asset: id, except: current)
            }
        }
    }

    // MARK: Pre-caching

    /// `images.startCaching`: queues renders at idle priority; returns how many were queued,
    /// how many were in the cache already, and the ids skipped (unknown, unreadable).
    func startCaching(_ ids: [AssetID], size: PixelSize, mode: ContentMode, client: Int) throws(RPCError)
        -> (queued: Int, cached: Int, skipped: [String]) {
        var queued = 0
        var cached = 0
        var skipped: [String] = []
        for id in ids {
            guard let target = try? resolve(id, size: size, mode: mode) else {
                skipped.append(id.rawValue)
                continue
            }
            if cache.lookup(target.stem) != nil {
                cached += 1
                continue
            }
            try state.withLock { s throws(RPCError) in
                if var job = s.jobs[target.stem] {
                    job.cachers.insert(client)
                    s.jobs[target.stem] = job
                } else {
                    guard s.jobs.count < Self.maxCachingJobs else {
                        throw .overloaded("\(Self.maxCachingJobs) images are waiting to be pre-rendered; stop some first")
                    }
                    s.jobs[target.stem] = Job(target: target, cachers: [client], queued: false)
                    s.idleQueue.append(target.stem)
                    // Stopped and moved jobs leave entries behind; the idle thread, at the lowest
                    // priority, may be slow to skip them: bounded here.
                    if s.idleQueue.pending > 2 * s.jobs.count + 4096 {
                        let jobs = s.jobs
                        s.idleQueue.compact { jobs[$0].map { !$0.queued && !$0.started } ?? false }
                    }
                    idleWork.signal()
                }
            }
            queued += 1
        }
        return (queued, cached, skipped)
    }

    /// `images.stopCaching`: this client's pre-caching of these assets (all when `ids` is nil)
    /// at this size and mode (any when nil) stops; returns how many renders were dropped or
    /// released. A render someone waits for goes on.
    func stopCaching(_ ids: [AssetID]?, size: PixelSize?, mode: ContentMode?, client: Int) -> Int {
        let wanted = ids.map { Set($0.map(\.rawValue)) }
        return state.withLock { s in
            var stopped = 0
            for (stem, var job) in s.jobs where job.cachers.contains(client) {
                if let wanted, !wanted.contains(job.target.asset.rawValue) { continue }
                if let size, job.target.size != size { continue }
                if let mode, job.target.mode != mode { continue }
                job.cachers.remove(client)
                s.jobs[stem] = job
                stopped += 1
                dropIfUnwanted(stem, &s)
            }
            return stopped
        }
    }

    // MARK: Work

    /// Removes a job nobody wants any more, unless it is running (its result is cached anyway).
    /// Its entry in a queue stays and is skipped when reached (no search of the queue).
    private func dropIfUnwanted(_ stem: String, _ s: inout State) {
        guard let job = s.jobs[stem], job.waiters.isEmpty, job.cachers.isEmpty, !job.started else { return }
        s.jobs[stem] = nil
    }

    /// The next job for a worker (nil: stop). The idle thread takes only pre-caching jobs.
    private func next(idle: Bool) -> String? {
        while true {
            (idle ? idleWork : work).wait()
            let taken = state.withLock { s -> String?? in
                if s.stopping { return .some(nil) }
                while true {
                    guard let stem = idle ? s.idleQueue.popFirst() : s.queue.popFirst() else { return .none }
                    // Skipped: dropped, taken already, or moved to the other queue.
                    guard var job = s.jobs[stem], !job.started, job.queued != idle else { continue }
                    job.started = true
                    s.jobs[stem] = job
                    return .some(stem)
                }
            }
            if let taken { return taken }
        }
    }

    private func render(_ stem: String) {
        guard let target = state.withLock({ $0.jobs[stem]?.target }) else { return }
        let outcome: Result<ImageCache.Entry, RPCError>
        do {
            let image = target.isVideo
                ? try renderer.renderPoster(path: target.path, targetSize: target.size, contentMode: target.mode).image
                : try renderer.render(path: target.path, targetSize: target.size, contentMode: target.mode,
                                      orientation: target.orientation)
            let encoded = try image.encoded(jpegQuality: options.jpegQuality)
            do {
                outcome = .success(try cache.store(encoded, stem: stem))
            } catch {
                logger.error("cannot write to the image cache '\(cache.root)': \(error)")
                outcome = .failure(.unavailable("cannot write to the image cache '\(cache.root)': \(error)"))
            }
        } catch {
            outcome = .failure(Self.rpcError(error, target: target))
        }
        let waiters = state.withLock { s -> [WaiterKey] in
            let job = s.jobs.removeValue(forKey: stem)
            let waiters = job?.waiters ?? []
            switch outcome {
            case .success: s.stats.rendered += 1
            case .failure: s.stats.failed += 1
            }
            if let job, waiters.isEmpty, !job.cachers.isEmpty { s.stats.preRendered += 1 }
            // Sent while the lock is held, in step with `sendStandIn`.
            for key in waiters {
                let line = Self.line(key.id, outcome.map { Self.result($0, target: target, degraded: false) })
                if s.waiting[key]?.standInPending == true {
                    s.waiting[key]?.heldFinal = line
                } else {
                    s.waiting[key] = nil
                    s.perClient[key.client, default: 1] -= 1
                    send(line, to: key.client)
                }
            }
            return waiters
        }
        if case .failure(let e) = outcome, !waiters.isEmpty {
            logger.debug("image of \(target.asset) at \(target.size) failed: \(e.detail ?? e.message)")
        }
    }

    /// The stand-in step of an `opportunistic` request: sends a degraded image if one is at
    /// hand, then the final answer if it was held for it.
    private func sendStandIn(for target: Target, to key: WaiterKey) {
        guard state.withLock({ $0.waiting[key] != nil }) else { return }
        let degraded = degradedImage(for: target, smallerThanFinal: true)
        state.withLock { s in
            guard let waiting = s.waiting[key] else { return }
            if let degraded {
                s.stats.degraded += 1
                var params = Self.result(degraded, target: target, degraded: true)
                params.append("requestID", key.id.json)
                send(RPCNotification(method: "images.degraded", params: .object(params)).encodedLine(), to: key.client)
            }
            if let final = waiting.heldFinal {
                s.waiting[key] = nil
                s.perClient[key.client, default: 1] -= 1
                send(final, to: key.client)
            } else {
                s.waiting[key]?.standInPending = false
            }
        }
    }

    /// A quickly available image of the same file version: the cached one closest in size (a
    /// smaller poster of a video made before), else the thumbnail the file carries — a JPEG's
    /// in its EXIF block (extracted without decoding the photo), a HEIF file's thumbnail item
    /// (decoded alone, a few milliseconds where the photo takes hundreds), a camera RAW's
    /// embedded preview (a JPEG decoded at a DCT scale, where developing takes seconds), a
    /// video's cover picture (MP4 `covr`, a Matroska cover attachment).
    ///
    /// `smallerThanFinal` (an opportunistic request's stand-in): only an image with fewer
    /// pixels than the final one will have — a larger one is no quicker to show and is
    /// replaced at once by something smaller: pointless. `fast` takes whatever is at hand, as
    /// its one answer.
    private func degradedImage(for target: Target, smallerThanFinal: Bool) -> ImageCache.Entry? {
        let limit = smallerThanFinal ? target.finalSize.pixelCount : Int.max
        // Never the final image itself (made meanwhile, it is no stand-in).
        let variants = cache.variants(asset: target.asset, fileKey: target.fileKey, excluding: target.stem)
        let want = min(target.size.pixelCount, limit)
        if let best = variants.filter({ $0.size.pixelCount < limit })
            .min(by: { abs($0.size.pixelCount - want) < abs($1.size.pixelCount - want) }) {
            return best
        }
        let thumbnailStem = ImageCache.exifStem(asset: target.asset, fileKey: target.fileKey)
        // The file's own thumbnail is cached already (so too large): no need to look again.
        if cache.holds(thumbnailStem) { return nil }
        // Only the reader for the file's format opens it (PNG and WebP carry no thumbnail).
        let sameVersion = { (st: FileStat) in ImageCache.fileKey(st) == target.fileKey }
        let encoded: EncodedImage
        switch target.isVideo ? "video" : target.format {
        case "video":
            guard let cover = renderer.renderCoverArt(path: target.path, targetSize: target.size, contentMode: .fit,
                                                      accept: sameVersion),
                  let image = try? cover.encoded(jpegQuality: options.jpegQuality) else { return nil }
            encoded = image
        case "jpeg", "mpo":
            guard let thumbnail = try? EmbeddedThumbnail.extract(path: target.path, orientation: target.orientation, accept: sameVersion),
                  let jpeg = try? thumbnail.encodedForCache(quality: options.jpegQuality) else { return nil }
            encoded = jpeg
        case "heic", "heif", "avif":
            guard let thumbnail = try? HEIFThumbnail.render(path: target.path, accept: sameVersion),
                  let image = try? thumbnail.encoded(jpegQuality: options.jpegQuality) else { return nil }
            encoded = image  // PNG when it has transparency, as the final image would be
        case let format where MediaFormat(rawValue: format)?.isRaw == true:
            guard let preview = try? RAWPreview.render(path: target.path, orientation: target.orientation, renderer: renderer,
                                                       accept: sameVersion),
                  let image = try? preview.encoded(jpegQuality: options.jpegQuality) else { return nil }
            encoded = image
        default:
            return nil
        }
        // Kept even when too large to stand in now: it may stand in for a larger request.
        guard let entry = try? cache.store(encoded, stem: thumbnailStem) else { return nil }
        return entry.size.pixelCount < limit ? entry : nil
    }

    // MARK: Helpers

    /// Looks the asset up and names what is to be rendered (its file as it is now).
    private func resolve(_ id: AssetID, size: PixelSize, mode: ContentMode) throws(RPCError) -> Target {
        let asset: Asset?
        do {
            asset = try database.read { try $0.asset(id: id) }
        } catch {
            throw .internalError("cannot read the index: \(error)")
        }
        guard let asset else { throw .notFound("no asset \(id)", extra: ["id": .string(id.rawValue)]) }
        // MNG is an animation photod indexes as a video; FFmpeg has no demuxer for it.
        if asset.format == "mng" { throw .unsupported("asset \(id) ('\(asset.path)'): unsupported: cannot decode MNG animation") }
        // An asset in Recently Deleted by `assets.trash` is drawn from its trashed file.
        var path = asset.path
        let st: FileStat
        do {
            st = try FileStat.of(path)
        } catch {
            guard let hidden = (try? database.read { try $0.trashedPath(of: id, at: asset.path) }) ?? nil,
                  let s = try? FileStat.of(hidden) else {
                throw .imageFailed("cannot read the file of asset \(id) ('\(asset.path)'): \(error.message)", reason: "unreadable")
            }
            path = hidden
            st = s
        }
        let fileKey = ImageCache.fileKey(st)
        let orientation = Orientation(exif: asset.orientation)
        let stored = asset.pixelWidth.flatMap { w in asset.pixelHeight.map { PixelSize(width: w, height: $0) } }
        return Target(asset: id, path: path, fileKey: fileKey, size: size, mode: mode,
                      orientation: orientation, format: asset.format, isVideo: asset.mediaType == .video,
                      stem: ImageCache.stem(asset: id, fileKey: fileKey, mode: mode.rawValue, target: size),
                      finalSize: ImageRenderer.outputSize(displayed: stored.map(orientation.displayed), target: size, mode: mode))
    }

    static func rpcError(_ error: ImageError, target: Target) -> RPCError {
        let what = "asset \(target.asset) ('\(target.path)')"
        switch error {
        case .unsupported: return .unsupported("\(what): \(error)")
        case .invalidRequest(let detail): return .invalidParams(detail)
        default: return .imageFailed("\(what): \(error)", reason: error.code)
        }
    }

    static func result(_ entry: ImageCache.Entry, target: Target, degraded: Bool) -> JSONObject {
        result(entry, asset: target.asset, degraded: degraded)
    }

    static func result(_ entry: ImageCache.Entry, asset: AssetID, degraded: Bool) -> JSONObject {
        [
            "asset": .string(asset.rawValue),
            "path": .string(entry.path.string),
            "width": .int(Int64(entry.size.width)),
            "height": .int(Int64(entry.size.height)),
            "format": .string(entry.path.string.hasSuffix(".png") ? "png" : "jpeg"),
            "isDegraded": .bool(degraded),
        ]
    }

    static func line(_ id: RPCID, _ result: Result<JSONObject, RPCError>) -> [UInt8] {
        switch result {
        case .success(let object): RPCResponse.success(id: id, result: .object(object)).encodedLine()
        case .failure(let error): RPCResponse.failure(id: id, error: error).encodedLine()
        }
    }

    /// Sends a line through the client's connection, after what is queued there.
    private func send(_ line: [UInt8], to client: Int) {
        guard let c = connection(client) else { return }
        c.perform { c.enqueue(line) }
    }

    private func reply(_ client: Int, _ id: RPCID, _ result: Result<JSONObject, RPCError>) {
        send(Self.line(id, result), to: client)
    }
}

/// A FIFO of job stems: appends at the end, takes from a moving head, and drops the taken
/// prefix once it is half the storage (`removeFirst` would move every element each time).
struct StemQueue: Sendable {
    private var items: [String] = []
    private var head = 0

    mutating func append(_ stem: String) { items.append(stem) }

    /// Entries not taken yet, skipped ones included.
    var pending: Int { items.count - head }

    /// Keeps only the entries not taken yet that `live` accepts.
    mutating func compact(keeping live: (String) -> Bool) {
        items = items[head...].filter(live)
        head = 0
    }

    mutating func popFirst() -> String? {
        guard head < items.count else { return nil }
        let stem = items[head]
        head += 1
        if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return stem
    }
}
