import PhotoModel
import Testing

/// The rule every path that can remove assets applies first (`TreeAvailability.verdict`).
@Suite struct TreeAvailabilityTests {
    static let ext4: UInt32 = 0xEF53
    static let vfat: UInt32 = 0x4D44
    /// A disk mounted at /srv/photos: the top of its file system.
    static let disk = MountIdentity(fsid: 0xA1, fsType: ext4, fsPath: "/")
    /// The same path once the disk is unmounted: a directory of the root file system.
    static let mountPoint = MountIdentity(fsid: 0x51, fsType: ext4, fsPath: "/srv/photos")

    static func present(_ identity: MountIdentity?, at mountPoint: PathBytes? = "/srv/photos", entries: Bool = true,
                        inode: UInt64? = 2, holdsIndexedFiles: Bool? = nil) -> TreeAvailability.Probe {
        .present(TreeAvailability.Seen(identity: identity, mountPoint: mountPoint, hasVisibleEntries: entries, inode: inode,
                                       holdsIndexedFiles: holdsIndexedFiles))
    }

    static func verdict(recorded: MountIdentity?, _ probe: TreeAvailability.Probe,
                        indexed: TreeAvailability.Indexed = .init(entries: 12), isRoot: Bool = true) -> TreeAvailability.Verdict {
        TreeAvailability.verdict(path: "/srv/photos", isRoot: isRoot, recorded: recorded, probe: probe, indexed: indexed,
                                 adoptHint: "photoctl adopt /srv/photos")
    }

    static func fat(_ fsid: UInt64, _ volume: String?) -> MountIdentity {
        MountIdentity(fsid: fsid, fsType: vfat, fsPath: "/", volume: volume)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var recorded: MountIdentity?
        var probe: TreeAvailability.Probe
        var indexed = TreeAvailability.Indexed(entries: 12)
        var isRoot = true
        /// nil: available; else a word the reason must contain.
        var unavailableBecause: String?
        /// For an available verdict: the identity to record (nil: none).
        var records: MountIdentity? = nil
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "the same disk, where it was", recorded: disk, probe: present(disk)),
        Case(name: "cannot be opened (gone, permission, I/O)", recorded: disk, probe: .unopenable("No such file or directory"),
             unavailableBecause: "No such file"),
        Case(name: "unmounted: the mount point of the disk shows, with stale files", recorded: disk,
             probe: present(mountPoint, at: "/"), unavailableBecause: "not mounted"),
        Case(name: "unmounted and empty", recorded: disk, probe: present(mountPoint, at: "/", entries: false),
             unavailableBecause: "not mounted"),
        Case(name: "a bind mount unmounted: the directory beneath, same file system",
             recorded: MountIdentity(fsid: 0x51, fsType: ext4, fsPath: "/data/photos"),
             probe: present(mountPoint, at: "/"), unavailableBecause: "not mounted"),
        Case(name: "another disk mounted there", recorded: disk,
             probe: present(MountIdentity(fsid: 0xB2, fsType: ext4, fsPath: "/")), unavailableBecause: "photoctl adopt"),
        Case(name: "another file system type there", recorded: disk,
             probe: present(MountIdentity(fsid: 0xA1, fsType: 0x5846_5342, fsPath: "/")), unavailableBecause: "another file system"),
        Case(name: "a FAT card back as another /dev/sdX (its fsid is the device number), the same serial",
             recorded: fat(0x801, "1234-ABCD"), probe: present(fat(0x811, "1234-ABCD"))),
        Case(name: "another FAT card in the same reader: the same fsid, another serial", recorded: fat(0x801, "1234-ABCD"),
             probe: present(fat(0x801, "9999-0000")), unavailableBecause: "another file system"),
        Case(name: "a FAT-like disk without a serial, its indexed files on it", recorded: fat(0x801, nil),
             probe: present(fat(0x811, nil), holdsIndexedFiles: true)),
        Case(name: "a FAT-like disk without a serial, none of its indexed files on it (another card)", recorded: fat(0x801, nil),
             probe: present(fat(0x801, nil), holdsIndexedFiles: false), unavailableBecause: "none of the files indexed"),
        Case(name: "a disk mounted over an indexed folder (no record yet: the folder's row says which file system)",
             recorded: nil, probe: present(MountIdentity(fsid: 0xB2, fsType: ext4, fsPath: "/")),
             indexed: .init(entries: 3, fsid: 0x51, inode: 7001), unavailableBecause: "mounted over the indexed folder"),
        Case(name: "a bind mount over an indexed folder (same file system, another directory)", recorded: nil,
             probe: present(MountIdentity(fsid: 0x51, fsType: ext4, fsPath: "/data"), inode: 9),
             indexed: .init(entries: 3, fsid: 0x51, inode: 7001), unavailableBecause: "mounted over the indexed folder"),
        Case(name: "no record, the disk the folder's row was scanned on (an index from before records)", recorded: nil,
             probe: present(disk), indexed: .init(entries: 3, fsid: 0xA1, inode: 2), records: disk),
        Case(name: "no record, a root (not a mount point) on another fsid (the system restored to a new disk): by content",
             recorded: nil, probe: present(mountPoint, at: "/", inode: 9), indexed: .init(entries: 3, fsid: 0xA1, inode: 2),
             records: mountPoint),
        Case(name: "no record, a root that is another directory now on the same file system (a bind mount gone while down)",
             recorded: nil, probe: present(mountPoint, at: "/", inode: 9), indexed: .init(entries: 3, fsid: 0x51, inode: 7001),
             unavailableBecause: "another directory is at the root's path"),
        Case(name: "no record, a mount point below a root on another inode but not a mount point: judged by content",
             recorded: nil, probe: present(mountPoint, at: "/", inode: 9), indexed: .init(entries: 3, fsid: 0x51, inode: 7001),
             isRoot: false, records: mountPoint),
        Case(name: "a mount point that is gone, nothing indexed in it", recorded: disk, probe: .unopenable("No such file"),
             indexed: .init(entries: 0), isRoot: false),
        Case(name: "a root that is gone, nothing indexed in it", recorded: disk, probe: .unopenable("No such file"),
             indexed: .init(entries: 0), unavailableBecause: "No such file"),
        Case(name: "a mount point whose file system does not answer, nothing indexed in it: kept, never forgotten",
             recorded: disk, probe: .notAnswering("does not answer"), indexed: .init(entries: 0), isRoot: false,
             unavailableBecause: "does not answer"),
        Case(name: "a root whose file system does not answer", recorded: disk, probe: .notAnswering("does not answer"),
             unavailableBecause: "does not answer"),
        Case(name: "the same directory reached through another mount (ProtectHome= binds /home over itself)",
             recorded: MountIdentity(fsid: 0x51, fsType: ext4, fsPath: "/home/ann/Pictures"),
             probe: present(MountIdentity(fsid: 0x51, fsType: ext4, fsPath: "/home/ann/Pictures"), at: "/home")),
        Case(name: "the right file system, empty while the index holds files", recorded: disk, probe: present(disk, entries: false),
             unavailableBecause: "empty"),
        Case(name: "nothing recorded (indexed before records were kept), content there", recorded: nil, probe: present(disk),
             records: disk),
        Case(name: "nothing recorded, empty while the index holds files", recorded: nil, probe: present(disk, entries: false),
             unavailableBecause: "empty"),
        Case(name: "nothing indexed there: anything goes, and is recorded", recorded: disk,
             probe: present(MountIdentity(fsid: 0xB2, fsType: ext4, fsPath: "/")), indexed: .init(entries: 0),
             records: MountIdentity(fsid: 0xB2, fsType: ext4, fsPath: "/")),
        Case(name: "nothing indexed, empty", recorded: nil, probe: present(disk, entries: false), indexed: .init(entries: 0),
             records: disk),
        Case(name: "the mount table cannot tell: judged by content", recorded: disk, probe: present(nil, at: nil)),
        Case(name: "the mount table cannot tell, empty", recorded: disk, probe: present(nil, at: nil, entries: false),
             unavailableBecause: "empty"),
    ]

    @Test(arguments: cases)
    func verdicts(_ c: Case) {
        let v = Self.verdict(recorded: c.recorded, c.probe, indexed: c.indexed, isRoot: c.isRoot)
        if let word = c.unavailableBecause {
            #expect(!v.isAvailable, "\(v)")
            #expect(v.reason?.contains(word) == true, "\(v.reason ?? "available")")
        } else {
            #expect(v == .available(record: c.records), "\(v)")
        }
    }

    @Test("The reasons say what to do")
    func reasons() {
        let unmounted = Self.verdict(recorded: Self.disk, Self.present(Self.mountPoint, at: "/"))
        #expect(unmounted.reason?.contains("kept until it is back") == true)
        #expect(unmounted.reason?.contains("photoctl adopt /srv/photos") == true)
        let other = Self.verdict(recorded: Self.disk, Self.present(MountIdentity(fsid: 0xB2, fsType: Self.ext4, fsPath: "/")))
        #expect(other.reason?.contains("ext4 file system b2") == true, "\(other)")
        let empty = Self.verdict(recorded: Self.disk, Self.present(Self.disk, entries: false))
        #expect(empty.reason?.contains("photoctl adopt") == true, "\(empty)")
        #expect(Self.fat(1, "1234-ABCD").description == "/ of vfat volume 1234-ABCD")
    }
}
