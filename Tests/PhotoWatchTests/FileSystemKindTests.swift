import PhotoSystem
import Testing

@Suite("Network and FUSE file systems are told apart by statfs's f_type")
struct FileSystemKindTests {
    @Test("NFS, CIFS, SMB2, SMB, 9p, FUSE, Lustre, OCFS2 are polled; local file systems are watched")
    func magicNumbers() {
        let polled: [Int64] = [0x6969, 0xFF53_4D42, 0xFE53_4D42, 0x517B, 0x0102_1997, 0x6573_5546, 0x0BD0_0BD0, 0x7461_636F]
        for magic in polled { #expect(FileSystemInfo(fsid: 1, type: magic).isNetworkOrFUSE, "\(String(magic, radix: 16))") }
        // ext4, XFS, btrfs, tmpfs, overlayfs, ZFS, f2fs
        let local: [Int64] = [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0x794C_7630, 0x2FC1_2FC1, 0xF2F5_2010]
        for magic in local { #expect(!FileSystemInfo(fsid: 1, type: magic).isNetworkOrFUSE, "\(String(magic, radix: 16))") }
        // f_type is a signed long: the CIFS magic arrives sign-extended on some ABIs.
        #expect(FileSystemInfo(fsid: 1, type: Int64(Int32(bitPattern: 0xFF53_4D42))).isNetworkOrFUSE)
    }
}
