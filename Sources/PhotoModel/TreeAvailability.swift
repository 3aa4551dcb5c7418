/// Which file system a library tree lies on, and where in it: what the index records of each
/// library root and of each mount point below one, and what the disk shows now. Two identities
/// that differ mean the directory at that path is not the one indexed (an unmounted disk shows
/// its empty mount point, an unmounted bind mount the directory beneath it).
///
/// `fsPath` is the directory's path inside its file system (the mount's root as
/// `/proc/self/mountinfo` gives it, plus the path below the mount point), so it does not change
/// when the same directory is reached through another mount: systemd's `ProtectHome=` bind-mounts
/// `/home` over itself, a container binds the library in, a reboot renumbers mounts.
public struct MountIdentity: Sendable, Hashable, CustomStringConvertible {
    /// `statfs`'s `f_fsid`.
    public var fsid: UInt64
    /// `statfs`'s `f_type` (the file system's magic number).
    public var fsType: UInt32
    /// The path of the directory inside its file system (`/` for the top of a disk).
    public var fsPath: PathBytes
    /// The volume's own id where `f_fsid` cannot tell one disk from another (a FAT volume's
    /// serial number, udev's `ID_FS_UUID`; a FUSE or network file system's source), when known.
    public var volume: String?

    public init(fsid: UInt64, fsType: UInt32, fsPath: PathBytes, volume: String? = nil) {
        self.fsid = fsid
        self.fsType = fsType
        self.fsPath = fsPath
        self.volume = volume
    }

    /// Whether `f_fsid` identifies the file system across mounts. FAT, exFAT, ISO 9660, UDF and
    /// HFS(+) make it from the device number, which changes when a USB disk comes back as
    /// another `/dev/sdX` (and is the same for another card in the same reader); FUSE reports 0.
    public var fsidIsStable: Bool {
        guard fsid != 0 else { return false }
        switch fsType {
        case 0x4D44,        // MSDOS_SUPER_MAGIC: vfat, msdos
             0x2011_BAB0,   // EXFAT_SUPER_MAGIC
             0x9660,        // ISOFS_SUPER_MAGIC
             0x1501_3346,   // UDF_SUPER_MAGIC
             0x4244,        // HFS_SUPER_MAGIC
             0x482B:        // HFSPLUS_SUPER_MAGIC
            return false
        default:
            return true
        }
    }

    /// Whether `other` may be the same file system at the same place: the type and the path
    /// agree, and the fsid where it is stable, else the volume ids where both are known. (Two
    /// disks of an unstable kind without volume ids are told apart by their content, by the
    /// caller.)
    public func matches(_ other: MountIdentity) -> Bool {
        guard fsType == other.fsType, fsPath == other.fsPath else { return false }
        if fsidIsStable || other.fsidIsStable { return fsid == other.fsid }
        if let a = volume, let b = other.volume { return a == b }
        return true
    }

    /// Whether the identity alone tells this disk from another of its kind.
    public var isConclusive: Bool { fsidIsStable || volume != nil }

    /// The file system's kind by its magic number (`0x…` for one not named here).
    public var typeName: String {
        switch fsType {
        case 0xEF53: return "ext4"
        case 0x5846_5342: return "xfs"
        case 0x9123_683E: return "btrfs"
        case 0x2FC1_2FC1: return "zfs"
        case 0xF2F5_2010: return "f2fs"
        case 0x0102_1994: return "tmpfs"
        case 0x794C_7630: return "overlay"
        case 0x7366_746E: return "ntfs3"
        case 0x4D44: return "vfat"
        case 0x2011_BAB0: return "exfat"
        case 0x6969: return "nfs"
        case 0xFF53_4D42, 0xFE53_4D42: return "cifs"
        case 0x6573_5546: return "fuse"
        case 0x0102_1997: return "9p"
        case 0x9660: return "iso9660"
        case 0x1501_3346: return "udf"
        default: return "0x" + String(fsType, radix: 16)
        }
    }

    /// `/photos of ext4 file system 41eb7df75b6bfa79` (`of vfat volume 1234-ABCD`).
    public var description: String {
        if let volume { return "\(fsPath) of \(typeName) volume \(volume)" }
        return "\(fsPath) of \(typeName) file system \(String(fsid, radix: 16))"
    }
}

/// The rule that decides whether a library tree (a root, or a mount point below one) may be
/// compared with the index — the comparison that removes what the disk no longer shows. One
/// rule for every path that can remove assets: the start-up scan, a rescan of any directory, a
/// poll, a subtree scan, a watcher event. Pure: the caller probes the disk and the index.
public enum TreeAvailability {
    /// What the disk shows at the tree's path now.
    public enum Probe: Sendable, Hashable {
        /// The directory cannot be opened or listed (missing, permission, I/O error): the reason.
        case unopenable(String)
        /// The file system did not answer within the probe's deadline (a hard-mounted share whose
        /// server is down, a FUSE daemon that hangs): the reason. Never read as "gone".
        case notAnswering(String)
        /// The directory is there.
        case present(Seen)
    }

    /// A directory that is there, as the probe saw it.
    public struct Seen: Sendable, Hashable {
        /// Nil when the mount table cannot place it (then fsid and type alone, or nothing).
        public var identity: MountIdentity?
        /// The mount point of the mount it lies on, when known.
        public var mountPoint: PathBytes?
        /// It holds something a scan would look at (not only dot-files).
        public var hasVisibleEntries: Bool
        /// The directory's inode.
        public var inode: UInt64?
        /// For a kind of disk the identity cannot tell apart (`MountIdentity.isConclusive`):
        /// whether files the index has there are on it (same path, size and mtime); nil when not
        /// looked at.
        public var holdsIndexedFiles: Bool?

        public init(identity: MountIdentity?, mountPoint: PathBytes?, hasVisibleEntries: Bool, inode: UInt64? = nil,
                    holdsIndexedFiles: Bool? = nil) {
            self.identity = identity
            self.mountPoint = mountPoint
            self.hasVisibleEntries = hasVisibleEntries
            self.inode = inode
            self.holdsIndexedFiles = holdsIndexedFiles
        }
    }

    /// What the index holds of the tree.
    public struct Indexed: Sendable, Hashable {
        /// Files and directories directly in it (0: nothing to lose, whatever the disk shows).
        public var entries: Int
        /// The file system and inode its directory row was scanned with (before records were
        /// kept, the only trace of which disk it was).
        public var fsid: UInt64?
        public var inode: UInt64?

        public init(entries: Int, fsid: UInt64? = nil, inode: UInt64? = nil) {
            self.entries = entries
            self.fsid = fsid
            self.inode = inode
        }
    }

    public enum Verdict: Sendable, Hashable {
        /// The tree may be scanned. `record`: the identity to record for it (first sight, or
        /// nothing indexed there to lose), nil when the recorded one stands.
        case available(record: MountIdentity?)
        /// Nothing below it may be touched: the reason, for the log and `library.status`.
        case unavailable(String)

        public var isAvailable: Bool {
            if case .available = self { return true }
            return false
        }

        public var reason: String? {
            if case .unavailable(let r) = self { return r }
            return nil
        }
    }

    /// - Parameters:
    ///   - path: the tree (for the messages).
    ///   - isRoot: a library root (else a mount point below one).
    ///   - recorded: the identity recorded when the tree was last scanned, if any.
    ///   - probe: what the disk shows now.
    ///   - indexed: what the index holds there.
    ///   - adoptHint: what the operator runs to accept what is there now.
    public static func verdict(path: PathBytes, isRoot: Bool = true, recorded: MountIdentity?, probe: Probe,
                               indexed: Indexed, adoptHint: String) -> Verdict {
        let adopt = "if the library really lives here now, run '\(adoptHint)'"
        let seen: Seen
        switch probe {
        case .unopenable(let reason):
            // A mount point that is gone, with nothing indexed in it, is nothing to keep.
            return !isRoot && indexed.entries == 0 ? .available(record: nil) : .unavailable(reason)
        case .notAnswering(let reason):
            return .unavailable(reason)
        case .present(let present):
            seen = present
        }
        let identity = seen.identity
        guard indexed.entries > 0 else { return .available(record: identity == recorded ? nil : identity) }
        if let recorded, let identity {
            if !recorded.matches(identity) {
                if let mountPoint = seen.mountPoint, mountPoint != path, recorded.fsPath != identity.fsPath {
                    // No longer a mount point of its own: a directory of the file system above, the
                    // mount point of what was indexed there (a disk's top, a bind mount's source).
                    return .unavailable("not mounted: indexed as \(recorded), it is now \(identity), the mount point "
                                        + "only; everything indexed in it is kept until it is back (\(adopt))")
                }
                return .unavailable("another file system is mounted here: indexed as \(recorded), it is now \(identity); "
                                    + "nothing indexed in it is removed (\(adopt))")
            }
            if !(recorded.isConclusive && identity.isConclusive), seen.holdsIndexedFiles == false {
                return .unavailable("another \(identity.typeName) disk is mounted here: none of the files indexed there is on "
                                    + "it (same path, size and time); nothing indexed in it is removed (\(adopt))")
            }
        } else if recorded == nil, let identity, identity.fsidIsStable {
            // Indexed before records were kept, or as a plain folder that a disk is mounted over
            // now: the directory row says which file system and directory it was.
            let mounted = seen.mountPoint == path
            if mounted, let fsid = indexed.fsid, fsid != identity.fsid {
                return .unavailable("another file system is mounted over the indexed folder: it is now \(identity), "
                                    + "indexed on file system \(String(fsid, radix: 16)); nothing indexed in it is removed "
                                    + "(\(adopt))")
            }
            if mounted || isRoot, indexed.fsid == nil || indexed.fsid == identity.fsid,
               let inode = indexed.inode, let now = seen.inode, inode != now {
                return .unavailable(mounted
                    ? "a directory is mounted over the indexed folder (\(identity)); nothing indexed in it is removed (\(adopt))"
                    : "another directory is at the root's path than the one indexed (an unmounted bind mount?); nothing "
                        + "indexed in it is removed (\(adopt))")
            }
        }
        guard seen.hasVisibleEntries else {
            return .unavailable("the directory is empty but the index holds \(indexed.entries) entries there: "
                                + "is the disk or share mounted? (if it was emptied on purpose, run '\(adoptHint)')")
        }
        return .available(record: recorded == nil ? identity : nil)
    }
}
