import Foundation
import PhotoModel
@testable import PhotoPipeline
import PhotoStore
import PhotoSystem
import PhotoTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs mount(8) or umount(8); whether it succeeded.
private func mountTool(_ tool: String, _ arguments: [String]) -> Bool {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = [tool] + arguments
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}

/// The trash on disk, on real files: what it checks before it renames anything, and that what it
/// renames it can put back.
@Suite("The trash on disk")
struct LibraryTrashTests {
    /// An asset of the files `names` in `dir`, as the index would hold them now.
    static func asset(_ root: TemporaryDirectory, _ dir: String, _ names: [String], deleted: Bool = false) throws -> AssetFiles {
        let directory = root(dir)
        let confined = try ConfinedDirectory(directory, below: root.path)
        let fsid = try confined.fileSystemID()
        let files = try names.map { name -> AssetFile in
            let st = try confined.stat(Array(name.utf8))
            return AssetFile(directory: directory, name: Array(name.utf8),
                             identity: FileIdentity(fsid: fsid, inode: st.inode, size: st.size, mtimeNanoseconds: st.mtimeNanoseconds),
                             fingerprint: MediaFileReader.fingerprint(of: Array(name.utf8), in: confined.descriptor, size: st.size),
                             tombstone: deleted ? 1 : nil)
        }
        return AssetFiles(id: AssetID(rawValue: "a_3ocnwoznuaa7slhsdfeq")!, pk: 1, root: root.path, deletedAt: deleted ? 1 : nil, files: files)
    }

    static func names(_ root: TemporaryDirectory, _ dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root(dir).string).sorted()
    }

    @Test("A RAW+JPEG pair with its sidecar goes to hidden names and comes back; a taken name gets a suffix for all its files, one whose base name no other file has")
    func trashAndRestore() throws {
        let root = try TemporaryDirectory("trash-root")
        defer { root.remove() }
        for name in ["IMG_1.CR2", "IMG_1.JPG", "IMG_1.JPG.xmp"] { try root.write("trip/\(name)", Array("content of \(name)".utf8)) }
        let trash = LibraryTrash(roots: [root.path]) { _ in nil }
        let asset = try Self.asset(root, "trip", ["IMG_1.CR2", "IMG_1.JPG", "IMG_1.JPG.xmp"])
        #expect(trash.refusal(trashing: asset, expiresAt: 1_800_000_000) == nil)
        let trashed = try trash.trash(asset, expiresAt: 1_800_000_000)
        #expect(try Self.names(root, "trip") == [".photod-trashed-1800000000-IMG_1.CR2", ".photod-trashed-1800000000-IMG_1.JPG",
                                                 ".photod-trashed-1800000000-IMG_1.JPG.xmp"])

        // In Recently Deleted: the tombstones remember the hidden names.
        var deleted = asset
        deleted.deletedAt = 5
        deleted.files = zip(asset.files, trashed).map { var f = $0; f.trashedName = $1.trashedName; f.tombstone = 9; return f }
        // Someone puts a new IMG_1.JPG where the old one was.
        try root.write("trip/IMG_1.JPG", Array("another photo".utf8))
        // And another asset already took " (1)": its base name is not shared (it would pair).
        try root.write("trip/IMG_1 (1).HEIC", Array("someone else".utf8))
        let found = try trash.trashedFiles(of: deleted, requireAll: true).get()
        #expect(found.count == 3)
        let names = try trash.restoredNames(found, of: deleted)
        let (restores, renamed) = try trash.restore(found, to: names, of: deleted)
        #expect(try Self.names(root, "trip") == ["IMG_1 (1).HEIC", "IMG_1 (2).CR2", "IMG_1 (2).JPG", "IMG_1 (2).JPG.xmp", "IMG_1.JPG"])
        #expect(renamed.map(\.to.lastComponent).map { String(decoding: $0, as: UTF8.self) } == ["IMG_1 (2).CR2", "IMG_1 (2).JPG", "IMG_1 (2).JPG.xmp"])
        #expect(restores.map(\.identity) == asset.files.map(\.identity), "a rename keeps inode, size and mtime")
        #expect(try String(contentsOfFile: root("trip/IMG_1 (2).JPG").string, encoding: .utf8) == "content of IMG_1.JPG")
    }

    @Test("Refused before anything is renamed: a root not opened to the trash, an unavailable tree, a changed file, a link on the way")
    func refusals() throws {
        let root = try TemporaryDirectory("trash-refusals")
        defer { root.remove() }
        try root.write("a/one.jpg", Array("one".utf8))
        try root.write("a/two.jpg", Array("two".utf8))
        let asset = try Self.asset(root, "a", ["one.jpg", "two.jpg"])

        #expect(LibraryTrash(roots: []) { _ in nil }.refusal(trashing: asset, expiresAt: 1_800_000_000)?.kind == .permissionDenied)
        #expect(LibraryTrash(roots: [root.path]) { _ in (root.path, "unmounted") }.refusal(trashing: asset, expiresAt: 1_800_000_000)?.kind == .unavailable)

        let trash = LibraryTrash(roots: [root.path]) { _ in nil }
        // The second file changed after it was read: refused, and the first is not renamed either.
        try root.write("a/two.jpg", Array("TWO".utf8))
        #expect(trash.refusal(trashing: asset, expiresAt: 1_800_000_000)?.kind == .conflict)
        #expect(try Self.names(root, "a") == ["one.jpg", "two.jpg"])

        // Same size and mtime, other content: the fingerprint tells.
        let same = try Self.asset(root, "a", ["one.jpg"])
        let fd = open(root("a/one.jpg").string, O_WRONLY)
        #expect(pwrite(fd, "ONE", 3, 0) == 3)
        let mtime = timespec(tv_sec: Int(same.files[0].identity.mtimeNanoseconds / 1_000_000_000),
                             tv_nsec: Int(same.files[0].identity.mtimeNanoseconds % 1_000_000_000))
        var times = [mtime, mtime]
        #expect(futimens(fd, &times) == 0)
        close(fd)
        #expect(trash.refusal(trashing: same, expiresAt: 1_800_000_000)?.kind == .conflict)

        // A directory replaced by a link to elsewhere: not followed.
        let elsewhere = try TemporaryDirectory("trash-elsewhere")
        defer { elsewhere.remove() }
        try elsewhere.write("one.jpg", Array("one".utf8))
        let linked = try Self.asset(root, "a", ["one.jpg"])
        try FileManager.default.removeItem(atPath: root("a").string)
        try FileManager.default.createSymbolicLink(atPath: root("a").string, withDestinationPath: elsewhere.path.string)
        #expect(trash.refusal(trashing: linked, expiresAt: 1_800_000_000)?.kind == .conflict)
        #expect(throws: TrashRefusal.self) { try trash.trash(linked, expiresAt: 1) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path.string) == ["one.jpg"])
    }

    @Test("A library on a read-only mount (the unit's sandbox without ReadWritePaths=) is refused with that reason, before the permission bits",
          .enabled(if: getuid() == 0, "mounts need root"))
    func readOnlyMount() throws {
        let root = try TemporaryDirectory("trash-ro")
        defer { root.remove() }
        try root.write("d/x.jpg", Array("x".utf8))
        let asset = try Self.asset(root, "d", ["x.jpg"])
        try #require(mountTool("mount", ["--bind", root.path.string, root.path.string]), "bind mount")
        defer { _ = mountTool("umount", [root.path.string]) }
        try #require(mountTool("mount", ["-o", "remount,bind,ro", root.path.string]), "remount read-only")
        let refusal = LibraryTrash(roots: [root.path]) { _ in nil }.refusal(trashing: asset, expiresAt: 1_800_000_000)
        #expect(refusal?.kind == .permissionDenied)
        #expect(refusal?.reason.contains("ReadWritePaths=") == true, "\(String(describing: refusal))")
        #expect(try Self.names(root, "d") == ["x.jpg"])
    }

    @Test("A file trashed but not committed (photod stopped between the two) is found by its original name and identity")
    func uncommittedTrash() throws {
        let root = try TemporaryDirectory("trash-uncommitted")
        defer { root.remove() }
        try root.write("d/x.jpg", Array("x".utf8))
        var asset = try Self.asset(root, "d", ["x.jpg"], deleted: true)
        try FileManager.default.moveItem(atPath: root("d/x.jpg").string, toPath: root("d/.photod-trashed-99-x.jpg").string)
        try root.write("d/.photod-trashed-98-x.jpg", Array("not the one".utf8))  // same original name, other file
        let trash = LibraryTrash(roots: [root.path]) { _ in nil }
        let found = try trash.trashedFiles(of: asset, requireAll: true).get()
        #expect(found.map { String(decoding: $0.trashedName, as: UTF8.self) } == [".photod-trashed-99-x.jpg"])
        #expect(trash.unlink(found, of: asset) == nil)
        #expect(try Self.names(root, "d") == [".photod-trashed-98-x.jpg"])
        // Gone: a restore is refused, a delete for good has nothing left to unlink.
        asset.files[0].trashedName = Array(".photod-trashed-99-x.jpg".utf8)
        #expect(throws: TrashRefusal.self) { try trash.trashedFiles(of: asset, requireAll: true).get() }
        #expect(try trash.trashedFiles(of: asset, requireAll: false).get().isEmpty)
    }
}
