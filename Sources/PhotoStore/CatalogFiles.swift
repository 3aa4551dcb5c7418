#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// The fetch catalog's files, in a directory beside the database (`<database>.catalog`): one
/// file per column of one *generation* (the library at one change token), and a `manifest`
/// naming the generation, its token, its record count and the database it was made from.
///
/// The files are a cache. Each is written whole, synced, and only then named by the manifest,
/// which is replaced atomically; a generation's sort orders are added later, each synced before
/// it is renamed into place. A manifest of another format, schema or database, files of the
/// wrong size or offsets that do not add up are not used: the catalog is made again. Nothing
/// in them is ever the only copy of anything.
struct CatalogFiles {
    /// The `meta` key of the database's identity, which a manifest names.
    static let identityKey = "catalog.identity"
    /// 2: the video fields (frame rate, bit rate, codecs); a burst's other members flagged.
    static let format = 2

    let directory: String

    /// The fixed-width columns, in `CatalogColumns` order, with their element sizes.
    static let fixed: [(name: String, size: Int)] = [
        ("pk", 8), ("time", 8), ("day", 4), ("added", 8), ("width", 8), ("height", 8), ("latitude", 8), ("longitude", 8),
        ("duration", 8), ("make", 4), ("model", 4), ("subtypes", 8), ("flags", 1), ("frameRate", 8), ("bitRate", 8),
        ("videoCodec", 4), ("audioCodec", 4),
    ]

    /// One generation's files, for the orders and ranks made after it.
    final class Generation: Sendable {
        let directory: String
        let name: String
        private let retired = Locked(false)

        init(directory: String, name: String) {
            self.directory = directory
            self.name = name
        }

        func path(_ file: String) -> String { "\(directory)/\(name).\(file)" }

        /// Its files are being removed: columns made from now on stay in memory.
        func retire() { retired.withLock { $0 = true } }

        /// The column `file` of `count` values: mapped if it was made before and passes `valid`,
        /// else filled by `fill` into a new file first. Nil when it cannot be made or the
        /// generation is retired (the caller keeps it in memory).
        func column(_ file: String, count: Int, valid: (CatalogColumn<Int32>) -> Bool,
                    _ fill: (UnsafeMutableBufferPointer<Int32>) -> Void) -> CatalogColumn<Int32>? {
            guard !retired.withLock({ $0 }) else { return nil }
            let final = path(file)
            if let mapped = try? CatalogFiles.map(final, count: count, of: Int32.self) {
                if valid(mapped) { return mapped }
                _ = Glibc.unlink(final)  // damaged: made again below
            }
            let temporary = final + ".tmp-\(getpid())-\(UInt32.random(in: 0 ... .max))"
            do {
                try MappedFileFill.fill(temporary, count: count, of: Int32.self, fill)
                guard Glibc.rename(temporary, final) == 0 else { throw SystemError(call: "rename", errno: errno, context: final) }
                return try CatalogFiles.map(final, count: count, of: Int32.self)
            } catch {
                _ = Glibc.unlink(temporary)
                return nil
            }
        }
    }

    /// A column file of exactly `count` values, mapped.
    static func map<T: BitwiseCopyable>(_ path: String, count: Int, of: T.Type) throws(SystemError) -> CatalogColumn<T> {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<T>.stride)
        guard count >= 0, !overflow else { throw SystemError(call: "size", errno: EINVAL, context: "\(path): \(count) entries") }
        let memory = try mapFile(path, bytes: bytes, exact: true)
        return CatalogColumn(memory: memory, count: count)
    }

    /// Whether `order` holds every index of 0..<count once (a sort order, the id order): a
    /// damaged file must neither send a read outside a column nor repeat or drop a record.
    static func isPermutation(_ order: CatalogColumn<Int32>, count: Int) -> Bool {
        guard order.count == count else { return false }
        var seen = Bitmap(count: count, filled: false)
        for i in order {
            guard i >= 0, Int(i) < count, !seen[Int(i)] else { return false }
            seen.insert(Int(i))
        }
        return true
    }

    /// The file at `path`, mapped; it must be `bytes` long (or at least, unless `exact`).
    static func mapFile(_ path: String, bytes: Int, exact: Bool) throws(SystemError) -> ColumnMemory {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError(call: "open", errno: errno, context: path) }
        defer { _ = Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SystemError(call: "fstat", errno: errno, context: path) }
        guard exact ? Int(st.st_size) == bytes : Int(st.st_size) >= bytes else {
            throw SystemError(call: "size", errno: EINVAL, context: "\(path): \(st.st_size) bytes, expected \(bytes)")
        }
        return try ColumnMemory(mapping: fd, bytes: bytes, path: path)
    }

    // MARK: The manifest

    struct Manifest: Equatable {
        var identity: Int64
        var schema: Int
        var token: Int64
        var count: Int
        var strings: Int
        var keywords: Int
        var generation: String
        /// The `time` of the change set at `token` (0 at token 0): a database rolled back by a
        /// power cut (or an older copy put back) that reaches the same token again has other
        /// change sets under it, and its files are not used.
        var fingerprint: Int64

        var text: String {
            """
            photod-catalog \(CatalogFiles.format)
            identity \(identity)
            schema \(schema)
            token \(token)
            count \(count)
            strings \(strings)
            keywords \(keywords)
            generation \(generation)
            fingerprint \(fingerprint)

            """
        }

        init(identity: Int64, schema: Int, token: Int64, count: Int, strings: Int, keywords: Int, generation: String,
             fingerprint: Int64) {
            self.fingerprint = fingerprint
            self.identity = identity
            self.schema = schema
            self.token = token
            self.count = count
            self.strings = strings
            self.keywords = keywords
            self.generation = generation
        }

        init?(_ text: String) {
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
            }
            guard fields["photod-catalog"] == "\(CatalogFiles.format)", let identity = fields["identity"].flatMap({ Int64($0) }),
                  let schema = fields["schema"].flatMap({ Int($0) }), let token = fields["token"].flatMap({ Int64($0) }),
                  let count = fields["count"].flatMap({ Int($0) }), let strings = fields["strings"].flatMap({ Int($0) }),
                  let keywords = fields["keywords"].flatMap({ Int($0) }), let generation = fields["generation"],
                  let fingerprint = fields["fingerprint"].flatMap({ Int64($0) }),
                  (0...Int(Int32.max)).contains(count), (0...Int(Int32.max)).contains(strings),
                  (0...Int(Int32.max)).contains(keywords), !generation.contains("/"), !generation.isEmpty
            else { return nil }
            self.init(identity: identity, schema: schema, token: token, count: count, strings: strings, keywords: keywords,
                      generation: generation, fingerprint: fingerprint)
        }
    }

    var manifestPath: String { directory + "/manifest" }

    // MARK: Loading

    /// The snapshot the manifest names, mapped, if it is of `identity`'s database at this
    /// schema and its files are whole; nil otherwise.
    func load(identity: Int64, reader: IndexReader, bounds: JournalBounds) throws(StoreError) -> CatalogSnapshot? {
        guard identity != 0,
              let bytes = try? FileDescriptor.readAll(PathBytes(manifestPath), limit: 4096),
              let manifest = Manifest(String(decoding: bytes, as: UTF8.self)),
              manifest.identity == identity, manifest.schema == Schema.currentVersion,
              manifest.token <= bounds.current, manifest.token >= bounds.floor,
              try Self.fingerprint(reader, token: manifest.token) == manifest.fingerprint,
              let snapshot = try? open(manifest)
        else { return nil }
        // What a build cut short (a kill, a crash) left behind; nothing else writes here yet.
        removeAll(except: manifest.generation)
        return snapshot
    }

    /// The `time` of the change set at `token`, 0 when there is none (token 0, or pruned).
    static func fingerprint(_ reader: IndexReader, token: Int64) throws(StoreError) -> Int64 {
        try reader.db.scalar("SELECT time FROM changes WHERE token = ?1", .integer(token)).int64 ?? 0
    }

    private func open(_ m: Manifest) throws(SystemError) -> CatalogSnapshot? {
        let g = Generation(directory: directory, name: m.generation)
        let n = m.count
        let columns = CatalogColumns(
            pk: try Self.map(g.path("pk"), count: n, of: Int64.self), time: try Self.map(g.path("time"), count: n, of: Int64.self),
            day: try Self.map(g.path("day"), count: n, of: Int32.self), added: try Self.map(g.path("added"), count: n, of: Int64.self),
            width: try Self.map(g.path("width"), count: n, of: Int64.self),
            height: try Self.map(g.path("height"), count: n, of: Int64.self),
            latitude: try Self.map(g.path("latitude"), count: n, of: Double.self),
            longitude: try Self.map(g.path("longitude"), count: n, of: Double.self),
            duration: try Self.map(g.path("duration"), count: n, of: Double.self),
            make: try Self.map(g.path("make"), count: n, of: Int32.self), model: try Self.map(g.path("model"), count: n, of: Int32.self),
            subtypes: try Self.map(g.path("subtypes"), count: n, of: Int64.self),
            flags: try Self.map(g.path("flags"), count: n, of: UInt8.self),
            frameRate: try Self.map(g.path("frameRate"), count: n, of: Double.self),
            bitRate: try Self.map(g.path("bitRate"), count: n, of: Int64.self),
            videoCodec: try Self.map(g.path("videoCodec"), count: n, of: Int32.self),
            audioCodec: try Self.map(g.path("audioCodec"), count: n, of: Int32.self))
        func table(_ name: String, entries: Int) throws(SystemError) -> ByteTable? {
            let starts = try Self.map(g.path(name + ".starts"), count: entries + 1, of: Int.self)
            guard let total = starts.last else { return nil }
            let bytes = try Self.mapFile(g.path(name + ".bytes"), bytes: total, exact: true)
            // Offsets that run backwards would read outside the bytes.
            var previous = 0
            for s in starts {
                guard s >= previous, s <= total else { return nil }
                previous = s
            }
            guard starts.first == 0 else { return nil }
            return ByteTable(bytes: CatalogColumn(memory: bytes, count: total), starts: starts)
        }
        guard let ids = try table("ids", entries: n), let paths = try table("paths", entries: n),
              let strings = try table("strings", entries: m.strings), let words = try table("keywords", entries: m.keywords)
        else { return nil }
        let refStarts = try Self.map(g.path("keywords.record-starts"), count: n + 1, of: Int.self)
        guard let refCount = refStarts.last, (0...Int(Int32.max)).contains(refCount) else { return nil }
        let refs = try Self.map(g.path("keywords.refs"), count: refCount, of: Int32.self)
        let byID = try Self.map(g.path("byid"), count: n, of: Int32.self)
        // Every index in range: a damaged file must not send a read outside its table.
        var previous = 0
        for s in refStarts {
            guard s >= previous, s <= refCount else { return nil }
            previous = s
        }
        guard refs.allSatisfy({ $0 >= 0 && Int($0) < m.keywords }), Self.isPermutation(byID, count: n),
              [columns.make, columns.model, columns.videoCodec, columns.audioCodec].allSatisfy({ $0.allSatisfy { $0 >= -1 && Int($0) < m.strings } })
        else { return nil }
        let snapshot = CatalogSnapshot(
            token: m.token, columns: columns, ids: ids, paths: paths,
            keywords: KeywordLists(table: words, refs: refs, starts: refStarts),
            strings: (0..<strings.count).map { strings.string($0) }, byID: byID, files: g)
        snapshot.release()
        return snapshot
    }

    // MARK: Making

    /// Writes a generation of every asset at `token` (read in `reader`'s transaction, in
    /// (path, id) order, straight to the files: memory stays a few buffers), names it in the
    /// manifest, removes older generations, and returns it mapped.
    func build(_ reader: IndexReader, token: Int64, identity: Int64, cancelled: () -> Bool) throws(StoreError) -> CatalogSnapshot {
        // Before anything is written: nothing removed below may belong to another build.
        let name = "g\(token)-\(String(UInt32.random(in: 0 ... .max), radix: 16))"
        let g = Generation(directory: directory, name: name)
        do {
            return try write(reader, token: token, identity: identity, generation: g, cancelled: cancelled)
        } catch let error as StoreError {
            removeGeneration(name)
            throw error
        } catch let error as SystemError {
            removeGeneration(name)
            throw StoreError(code: error.errno == ENOSPC ? .full : .cannotOpen, message: "cannot write the fetch catalog: \(error)")
        } catch {
            removeGeneration(name)
            throw StoreError(code: .cannotOpen, message: "cannot write the fetch catalog: \(error)")
        }
    }

    private func write(_ reader: IndexReader, token: Int64, identity: Int64, generation g: Generation,
                       cancelled: () -> Bool) throws -> CatalogSnapshot {
        try Directory.makePath(PathBytes(directory), mode: 0o700)
        let fixed = try Self.fixed.map { try ColumnFileWriter(path: g.path($0.name)) }
        let ids = try TableWriter(g, "ids"), paths = try TableWriter(g, "paths")
        let refs = try ColumnFileWriter(path: g.path("keywords.refs"))
        let refStarts = try ColumnFileWriter(path: g.path("keywords.record-starts"))
        try refStarts.append(0)
        var strings = TextInterner(), words = TextInterner(), interner = CatalogSnapshot.Interner()
        var refCount = 0
        // The taggers' keywords in the same order, merged as the rows go by.
        let tagged = try reader.db.statement("""
            SELECT k.asset_id, k.keyword FROM asset_keywords k JOIN assets a ON a.id = k.asset_id ORDER BY a.path, a.id
            """)
        defer { tagged.reset() }
        var taggedRow = try tagged.step()
        let s = try reader.db.statement("SELECT \(CatalogSnapshot.columns) FROM assets a ORDER BY a.path, a.id")
        defer { s.reset() }
        var count = 0
        while try s.step() {
            guard let r = CatalogSnapshot.row(s, &interner) else { throw StoreError.undecodable(table: "assets", key: s.string(1)) }
            var more: [String] = []
            while taggedRow, tagged.string(0) == r.id {
                more.append(tagged.string(1))
                taggedRow = try tagged.step()
            }
            let keywords = more.isEmpty ? r.keywords : CatalogSnapshot.folded(r.keywords, more)
            let rec = r.record
            try fixed[0].append(rec.pk)
            try fixed[1].append(rec.time)
            try fixed[2].append(rec.day)
            try fixed[3].append(rec.added)
            try fixed[4].append(rec.width ?? CatalogColumns.noInteger)
            try fixed[5].append(rec.height ?? CatalogColumns.noInteger)
            try fixed[6].append(rec.latitude ?? .nan)
            try fixed[7].append(rec.longitude ?? .nan)
            try fixed[8].append(rec.duration ?? .nan)
            try fixed[9].append(strings.intern(rec.make))
            try fixed[10].append(strings.intern(rec.model))
            try fixed[11].append(rec.subtypes)
            try fixed[12].append(CatalogColumns.flags(rec))
            try fixed[13].append(rec.frameRate ?? .nan)
            try fixed[14].append(rec.bitRate ?? CatalogColumns.noInteger)
            try fixed[15].append(strings.intern(rec.videoCodec))
            try fixed[16].append(strings.intern(rec.audioCodec))
            try ids.append(r.id.utf8)
            try paths.append(r.path)
            for w in keywords { try refs.append(words.intern(w)) }
            refCount += keywords.count
            try refStarts.append(refCount)
            count += 1
            if count % 4_096 == 0, cancelled() { throw StoreError(code: .cancelled, message: "the catalog build was stopped") }
        }
        let stringTable = try TableWriter(g, "strings"), keywordTable = try TableWriter(g, "keywords")
        for text in strings.strings { try stringTable.append(text.utf8) }
        for text in words.strings { try keywordTable.append(text.utf8) }
        for w in fixed + [refs, refStarts] { try w.finish() }
        for t in [ids, paths, stringTable, keywordTable] { try t.finish() }
        if cancelled() { throw StoreError(code: .cancelled, message: "the catalog build was stopped") }
        // The records in id order, sorted in the file.
        let idTable = ByteTable(bytes: CatalogColumn(memory: try Self.mapFile(g.path("ids.bytes"), bytes: ids.bytes, exact: true),
                                              count: ids.bytes),
                                starts: try Self.map(g.path("ids.starts"), count: count + 1, of: Int.self))
        try MappedFileFill.fill(g.path("byid"), count: count, of: Int32.self) { order in
            for i in 0..<order.count { order[i] = Int32(i) }
            var order = order
            order.sort { a, b in idTable.slice(Int(a)).lexicographicallyPrecedes(idTable.slice(Int(b))) }
        }
        let manifest = Manifest(identity: identity, schema: Schema.currentVersion, token: token, count: count,
                                strings: strings.strings.count, keywords: words.strings.count, generation: g.name,
                                fingerprint: try Self.fingerprint(reader, token: token))
        try AtomicFile.write(Array(manifest.text.utf8), to: PathBytes(manifestPath))
        removeAll(except: g.name)
        guard let snapshot = try open(manifest) else {
            throw StoreError(code: .corrupt, message: "the fetch catalog just written does not read back")
        }
        return snapshot
    }

    /// A byte table being written: its bytes and its offsets, in two files.
    final class TableWriter {
        let data: ColumnFileWriter
        let starts: ColumnFileWriter
        private(set) var bytes = 0

        init(_ g: Generation, _ name: String) throws(SystemError) {
            data = try ColumnFileWriter(path: g.path(name + ".bytes"))
            starts = try ColumnFileWriter(path: g.path(name + ".starts"))
            try starts.append(0)
        }

        func append(_ entry: some Collection<UInt8>) throws(SystemError) {
            try data.append(bytes: entry)
            bytes += entry.count
            try starts.append(bytes)
        }

        func finish() throws(SystemError) {
            try data.finish()
            try starts.finish()
        }
    }

    // MARK: Removing

    /// Every file of the directory, the manifest first (for `invalidate`).
    func removeAll() {
        _ = Glibc.unlink(manifestPath)
        removeAll(except: nil)
    }

    private func removeGeneration(_ name: String) {
        for entry in entries() where entry.hasPrefix(name + ".") { _ = Glibc.unlink(directory + "/" + entry) }
    }

    /// Removes the files of every generation but `kept` (and stray temporary files).
    private func removeAll(except kept: String?) {
        for entry in entries() where entry != "manifest" {
            if let kept, entry.hasPrefix(kept + "."), !entry.contains(".tmp-") { continue }
            _ = Glibc.unlink(directory + "/" + entry)
        }
    }

    private func entries() -> [String] {
        guard let dir = try? Directory(path: PathBytes(directory)), let list = try? dir.entries() else { return [] }
        return list.map { String(decoding: $0.name, as: UTF8.self) }
    }
}
