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

    public init(fsid: UInt64, fsType: UInt32, fsPath: PathBytes) {
        self.fsid = fsid
        self.fsType = fsType
        self.fsPath = fsPath
    }

    /// Whether `f_fsid` identifies the file system across mounts. FAT, exFAT, ISO 9660, UDF and
    /// HFS(+) make it from the device number, which changes when a USB disk comes back as
    /// another `/dev/sdX`; only their type and path are compared.
    public var fsidIsStable: Bool {
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

    /// Whether `other` is the same file system at the same place.
    public func matches(_ other: MountIdentity) -> Bool {
        guard fsType == other.fsType, fsPath == other.fsPath else { return false }
        return !fsidIsStable || fsid == other.fsid
    }

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

    /// `/photos of ext4 file system 41eb7df75b6bfa79`.
    public var description: String { "\(fsPath) of \(typeName) file system \(String(fsid, radix: 16))" }
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
        /// The directory is there. `identity` is nil when the mount table cannot tell it;
        /// `hasVisibleEntries`: it holds something the scan would look at (not only dot-files).
        case present(identity: MountIdentity?, mountPoint: PathBytes?, hasVisibleEntries: Bool)
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
    ///   - recorded: the identity recorded when the tree was last scanned, if any.
    ///   - probe: what the disk shows now.
    ///   - indexedEntries: how many files and directories the index holds directly in the tree
    ///     (0: nothing to lose, whatever the disk shows).
    ///   - adoptHint: what the operator runs to accept another file system there.
    public static func verdict(path: PathBytes, recorded: MountIdentity?, probe: Probe, indexedEntries: Int,
                               adoptHint: String) -> Verdict {
        guard case .present(let identity, let mountPoint, let hasEntries) = probe else {
            if case .unopenable(let reason) = probe { return .unavailable(reason) }
            return .unavailable("cannot be read")
        }
        guard indexedEntries > 0 else { return .available(record: identity == recorded ? nil : identity) }
        if let recorded, let identity, !recorded.matches(identity) {
            let adopt = "if the library really lives here now, run '\(adoptHint)'"
            if let mountPoint, mountPoint != path, recorded.fsPath != identity.fsPath {
                // No longer a mount point of its own: a directory of the file system above, the
                // mount point of what was indexed there (a disk's top, a bind mount's source).
                return .unavailable("not mounted: indexed as \(recorded), it is now \(identity), the mount point "
                                    + "only; everything indexed in it is kept until it is back (\(adopt))")
            }
            return .unavailable("another file system is mounted here: indexed as \(recorded), it is now \(identity); "
                                + "nothing indexed in it is removed (\(adopt))")
        }
        guard hasEntries else {
            return .unavailable("the directory is empty but the index holds \(indexedEntries) entries there: "
                                + "is the disk or share mounted?")
        }
        return .available(record: recorded == nil ? identity : nil)
    }
}
