import Foundation
import PhotoImaging
import PhotoModel
import PhotoSystem

// photod-thumb-bench: drives PhotoImaging for Benchmarks/thumb-bench.py and by hand.
//
//   photod-thumb-bench thumbs [--threads N] [--size PX] [--mode fit|fill] [--out DIR] FILE...
//       renders every FILE at PX x PX on N threads (default 2, 256, fit), encodes each as
//       JPEG (or PNG with transparency), writes it to DIR when given, and prints one JSON line:
//       {"images":…, "errors":…, "seconds":…, "images_per_second":…}
//   photod-thumb-bench posters [--threads N] [--size PX] [--mode fit|fill] [--out DIR] FILE...
//       the same for videos: each FILE's poster frame (ImageRenderer.renderPoster), as
//       images.request makes it; prints the same JSON line (Benchmarks/poster-bench.py).
//   photod-thumb-bench render FILE WIDTH HEIGHT fit|fill OUT
//       renders one file and writes the encoded result to OUT (the extension is appended).
//   photod-thumb-bench thumbnail FILE OUT
//       writes the EXIF-embedded thumbnail, oriented, to OUT.jpg.

func usage() -> Never {
    FileHandle.standardError.write(Data("""
        usage: photod-thumb-bench thumbs|posters [--threads N] [--size PX] [--mode fit|fill] [--out DIR] FILE...
               photod-thumb-bench render FILE WIDTH HEIGHT fit|fill OUT
               photod-thumb-bench thumbnail FILE OUT

        """.utf8))
    exit(64)
}

func write(_ encoded: EncodedImage, to base: String) {
    let path = base + "." + encoded.fileExtension
    _ = FileManager.default.createFile(atPath: path, contents: Data(encoded.bytes))
}

/// Files handed out to worker threads in order.
final class WorkList: Sendable {
    let files: [String]
    let next = Locked(0)
    init(_ files: [String]) { self.files = files }
    func take() -> (Int, String)? {
        next.withLock { i in
            guard i < files.count else { return nil }
            defer { i += 1 }
            return (i, files[i])
        }
    }
}

var arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else { usage() }
arguments.removeFirst()
let renderer = ImageRenderer()

switch command {
case "thumbs", "posters":
    let posters = command == "posters"
    var threads = 2, size = 256, mode = ContentMode.fit
    var outDir: String?
    var files: [String] = []
    var i = 0
    while i < arguments.count {
        let a = arguments[i]
        func value() -> String {
            i += 1
            guard i < arguments.count else { usage() }
            return arguments[i]
        }
        switch a {
        case "--threads": threads = Int(value()) ?? 2
        case "--size": size = Int(value()) ?? 256
        case "--mode": mode = ContentMode(rawValue: value()) ?? .fit
        case "--out": outDir = value()
        default: files.append(a)
        }
        i += 1
    }
    let work = WorkList(files)
    let errors = Locked(0)
    let target = PixelSize(width: size, height: size)
    let start = ContinuousClock.now
    let out = outDir
    let renderMode = mode
    let done = DispatchGroup()
    let workers = (0..<max(1, threads)).map { _ in
        done.enter()
        return Thread {
            defer { done.leave() }
            while let (index, file) = work.take() {
                do {
                    let image = posters
                        ? try renderer.renderPoster(path: PathBytes(file), targetSize: target, contentMode: renderMode).image
                        : try renderer.render(path: PathBytes(file), targetSize: target, contentMode: renderMode)
                    let encoded = try image.encoded()
                    if let out { write(encoded, to: out + "/\(index)") }
                } catch {
                    errors.withLock { $0 += 1 }
                    FileHandle.standardError.write(Data("\(file): \(error)\n".utf8))
                }
            }
        }
    }
    for w in workers { w.start() }
    done.wait()
    let seconds = Double((ContinuousClock.now - start).components.attoseconds) / 1e18
        + Double((ContinuousClock.now - start).components.seconds)
    let failed = errors.withLock { $0 }
    print("{\"images\":\(files.count - failed),\"errors\":\(failed),\"seconds\":\(seconds),\"images_per_second\":\(Double(files.count - failed) / seconds)}")
case "render":
    guard arguments.count == 5, let w = Int(arguments[1]), let h = Int(arguments[2]),
          let mode = ContentMode(rawValue: arguments[3]) else { usage() }
    do {
        let image = try renderer.render(path: PathBytes(arguments[0]), targetSize: PixelSize(width: w, height: h), contentMode: mode)
        write(try image.encoded(), to: arguments[4])
        print("\(image.size) channels=\(image.channels)")
    } catch {
        print("error: \(error)")
        exit(1)
    }
case "thumbnail":
    guard arguments.count == 2 else { usage() }
    do {
        guard let thumbnail = try EmbeddedThumbnail.extract(path: PathBytes(arguments[0])) else {
            print("no embedded thumbnail")
            exit(1)
        }
        let image = try thumbnail.decode()
        write(try image.encodeJPEG(), to: arguments[1])
        print("\(image.size) orientation=\(thumbnail.orientation.rawValue)")
    } catch {
        print("error: \(error)")
        exit(1)
    }
default:
    usage()
}
