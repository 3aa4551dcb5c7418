#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem

/// Reading a file for decoding: the whole file (decoders take a buffer), or its head.
enum FileBytes {
    /// The file's bytes: one `fstat`, then `pread` until the size `fstat` reported (a file
    /// that shrinks meanwhile yields what is left; the decoders then see a truncated file).
    static func read(_ path: PathBytes, limit: Int64, head: Int? = nil) throws(ImageError) -> [UInt8] {
        // Never nil: the check accepts every file.
        try read(path, limit: limit, head: head, accept: { _ in true }) ?? []
    }

    /// As `read`, or nil when `accept` refuses the file as opened (its `fstat`: the caller's
    /// file version), so that what is read is the version the caller named.
    static func read(_ path: PathBytes, limit: Int64, head: Int? = nil, accept: (FileStat) -> Bool) throws(ImageError) -> [UInt8]? {
        let fd: FileDescriptor
        do throws(SystemError) { fd = try FileDescriptor.open(path) } catch { throw unreadable(error) }
        defer { fd.close() }
        let size: Int64
        do throws(SystemError) {
            let st = try fd.stat()
            guard !st.isDirectory else { throw SystemError(call: "read", errno: EISDIR, context: path.string) }
            guard accept(st) else { return nil }
            size = st.size
        } catch { throw unreadable(error) }
        let want: Int64 = head.map { min(Int64($0), size) } ?? size
        if head == nil, size > limit { throw .fileTooLarge(bytes: size, limit: limit) }
        guard want > 0 else { return [] }
        var failure: SystemError?
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(want)) { buffer, initialized in
            var done = 0
            while done < buffer.count {
                let n: Int
                do throws(SystemError) {
                    n = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[done...]),
                                    at: Int64(done))
                } catch {
                    failure = error
                    break
                }
                if n <= 0 { break }
                done += n
            }
            initialized = done
        }
        if let failure { throw unreadable(failure) }
        return bytes
    }

    static func unreadable(_ error: SystemError) -> ImageError {
        .unreadable(errno: error.errno, "cannot read '\(error.context ?? "")': \(error.message)")
    }
}
