#if canImport(Glibc)
import Glibc
#endif
import PhotoModel
import PhotoSystem
import Testing

@Suite struct MountTableTests {
    /// Lines as the kernel writes them (proc(5)): optional fields before the separator, octal
    /// escapes in paths, a bind mount (root not `/`), a later mount hiding an earlier one.
    static let sample = """
        27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
        45 27 254:0 /data/photos /srv/photos rw,relatime shared:1 master:2 - ext4 /dev/vda rw
        46 45 7:0 / /srv/photos/usb\\040disk rw,relatime - ext4 /dev/loop0 rw
        47 27 0:50 / /mnt/nas rw,relatime - nfs4 server:/export rw,vers=4.2
        48 27 0:51 / /mnt/nas rw,relatime - tmpfs tmpfs rw
        garbage line
        49 27 0:52 /a\\134b /mnt/odd\\011tab rw - ext4 /dev/sdb1 rw

        """

    @Test("Parses every field, unescapes paths, skips what has not the shape")
    func parse() throws {
        let table = MountTable.parse(Array(Self.sample.utf8))
        #expect(table.entries.map(\.id) == [27, 45, 46, 47, 48, 49])
        let bind = try #require(table.entry(id: 45))
        #expect(bind.parentID == 27 && bind.root == "/data/photos" && bind.mountPoint == "/srv/photos")
        #expect(bind.fsType == "ext4" && bind.source == "/dev/vda")
        #expect(table.entry(id: 46)?.mountPoint == "/srv/photos/usb disk")
        #expect(table.entry(id: 47)?.fsType == "nfs4" && table.entry(id: 47)?.source == "server:/export")
        #expect(table.entry(id: 49)?.root == PathBytes("/a\\b") && table.entry(id: 49)?.mountPoint == "/mnt/odd\ttab")
    }

    @Test("A path's mount by mount points: the deepest, the last mounted there")
    func covering() {
        let table = MountTable.parse(Array(Self.sample.utf8))
        #expect(table.entry(covering: "/srv/photos/2019/a.jpg")?.id == 45)
        #expect(table.entry(covering: "/srv/photos/usb disk/x")?.id == 46)
        #expect(table.entry(covering: "/srv/photosx")?.id == 27)
        #expect(table.entry(covering: "/mnt/nas/a")?.id == 48)
    }

    @Test("The path inside the file system: the mount's root and what is below the mount point")
    func fileSystemPath() throws {
        let table = MountTable.parse(Array(Self.sample.utf8))
        #expect(table.entry(id: 27)?.fileSystemPath(of: "/srv/photos") == "/srv/photos")
        #expect(table.entry(id: 45)?.fileSystemPath(of: "/srv/photos") == "/data/photos")
        #expect(table.entry(id: 45)?.fileSystemPath(of: "/srv/photos/2019") == "/data/photos/2019")
        #expect(table.entry(id: 46)?.fileSystemPath(of: "/srv/photos/usb disk") == "/")
        #expect(table.entry(id: 46)?.fileSystemPath(of: "/srv/photos/usb disk/a") == "/a")
    }

    @Test("This process's table: the root file system is in it, and a directory's mount is found by its id")
    func live() throws {
        let table = try MountTable.read()
        #expect(table.entries.contains { $0.mountPoint == "/" })
        let dir = try Directory(path: "/")
        let mount = try #require(table.entry(of: dir.descriptor, path: "/"))
        #expect(mount.mountPoint == "/")
        if let id = mountID(of: dir.descriptor) { #expect(mount.id == id) }
    }
}
