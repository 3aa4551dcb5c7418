import PhotoModel

/// The bits of an inotify event mask (`IN_*` in `<sys/inotify.h>`). The raw values are the
/// kernel's ABI, spelled out here so that the coalescer stays free of C; a test checks each
/// against Glibc's constant.
public struct InotifyMask: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The mask as the kernel writes it (`uint32_t mask` of `struct inotify_event`).
    public let rawValue: UInt32
    /// Wraps a raw mask.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `IN_ACCESS`: a file was read.
    public static let access = InotifyMask(rawValue: 0x0000_0001)
    /// `IN_MODIFY`: a file was written (feeds only the no-close settle rule).
    public static let modify = InotifyMask(rawValue: 0x0000_0002)
    /// `IN_ATTRIB`: metadata changed (permissions, times, link count).
    public static let attrib = InotifyMask(rawValue: 0x0000_0004)
    /// `IN_CLOSE_WRITE`: a file opened for writing was closed.
    public static let closeWrite = InotifyMask(rawValue: 0x0000_0008)
    /// `IN_CLOSE_NOWRITE`: a file opened read-only was closed.
    public static let closeNoWrite = InotifyMask(rawValue: 0x0000_0010)
    /// `IN_OPEN`: a file was opened.
    public static let open = InotifyMask(rawValue: 0x0000_0020)
    /// `IN_MOVED_FROM`: an entry was renamed away from the watched directory.
    public static let movedFrom = InotifyMask(rawValue: 0x0000_0040)
    /// `IN_MOVED_TO`: an entry was renamed into the watched directory.
    public static let movedTo = InotifyMask(rawValue: 0x0000_0080)
    /// `IN_CREATE`: an entry was created in the watched directory.
    public static let create = InotifyMask(rawValue: 0x0000_0100)
    /// `IN_DELETE`: an entry was deleted from the watched directory.
    public static let delete = InotifyMask(rawValue: 0x0000_0200)
    /// `IN_DELETE_SELF`: the watched directory itself was deleted.
    public static let deleteSelf = InotifyMask(rawValue: 0x0000_0400)
    /// `IN_MOVE_SELF`: the watched directory itself was moved.
    public static let moveSelf = InotifyMask(rawValue: 0x0000_0800)
    /// `IN_UNMOUNT`: the file system holding the watched directory was unmounted.
    public static let unmount = InotifyMask(rawValue: 0x0000_2000)
    /// `IN_Q_OVERFLOW`: the kernel's event queue overflowed; events were lost.
    public static let queueOverflow = InotifyMask(rawValue: 0x0000_4000)
    /// `IN_IGNORED`: the watch was removed (explicitly, or because its directory is gone).
    public static let ignored = InotifyMask(rawValue: 0x0000_8000)
    /// `IN_ONLYDIR`: add the watch only if the path is a directory.
    public static let onlyDirectory = InotifyMask(rawValue: 0x0100_0000)
    /// `IN_DONT_FOLLOW`: do not follow a final symbolic link when adding the watch.
    public static let dontFollow = InotifyMask(rawValue: 0x0200_0000)
    /// `IN_EXCL_UNLINK`: no events for children after they were unlinked (open temp files).
    public static let excludeUnlinked = InotifyMask(rawValue: 0x0400_0000)
    /// `IN_ISDIR`: the subject of the event is a directory.
    public static let isDirectory = InotifyMask(rawValue: 0x4000_0000)

    /// What photod watches on every directory: entries created, closed after writing, moved,
    /// deleted; the directory itself deleted or moved; and `IN_MODIFY`/`IN_ATTRIB`, which only
    /// feed the settle rule for files that change without a close (hard links, NFS exports).
    public static let directoryWatch: InotifyMask = [
        .create, .closeWrite, .movedFrom, .movedTo, .delete, .deleteSelf, .moveSelf, .modify, .attrib,
        .onlyDirectory, .dontFollow, .excludeUnlinked,
    ]

    /// The names of the set bits, for logs and test failures.
    public var description: String {
        let names: [(InotifyMask, String)] = [
            (.access, "ACCESS"), (.modify, "MODIFY"), (.attrib, "ATTRIB"), (.closeWrite, "CLOSE_WRITE"),
            (.closeNoWrite, "CLOSE_NOWRITE"), (.open, "OPEN"), (.movedFrom, "MOVED_FROM"), (.movedTo, "MOVED_TO"),
            (.create, "CREATE"), (.delete, "DELETE"), (.deleteSelf, "DELETE_SELF"), (.moveSelf, "MOVE_SELF"),
            (.unmount, "UNMOUNT"), (.queueOverflow, "Q_OVERFLOW"), (.ignored, "IGNORED"), (.onlyDirectory, "ONLYDIR"),
            (.dontFollow, "DONT_FOLLOW"), (.excludeUnlinked, "EXCL_UNLINK"), (.isDirectory, "ISDIR"),
        ]
        let set = names.filter { contains($0.0) }.map(\.1)
        return set.isEmpty ? "0" : set.joined(separator: "|")
    }
}

/// One inotify record with its watch descriptor resolved to the directory's current path:
/// the coalescer's input.
public struct InotifyEvent: Sendable, Hashable, CustomStringConvertible {
    /// The watched directory the event happened in (empty for `IN_Q_OVERFLOW`).
    public var directory: PathBytes
    /// The entry's name inside `directory`; empty for events on the directory itself.
    public var name: [UInt8]
    /// The event bits.
    public var mask: InotifyMask
    /// Links the two halves of a rename (`IN_MOVED_FROM`, `IN_MOVED_TO`); 0 otherwise.
    public var cookie: UInt32

    /// An event on `name` in `directory`.
    public init(directory: PathBytes, name: [UInt8], mask: InotifyMask, cookie: UInt32 = 0) {
        self.directory = directory
        self.name = name
        self.mask = mask
        self.cookie = cookie
    }

    /// The kernel's "events were lost" record.
    public static let overflow = InotifyEvent(directory: PathBytes([]), name: [], mask: .queueOverflow)

    /// `directory/name` (the directory itself for a self event).
    public var path: PathBytes { name.isEmpty ? directory : directory.appending(name) }

    /// `MASK directory/name (cookie)`.
    public var description: String {
        "\(mask) \(path)" + (cookie != 0 ? " (cookie \(cookie))" : "")
    }
}
