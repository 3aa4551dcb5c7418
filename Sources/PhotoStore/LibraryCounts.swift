import PhotoModel

/// Counts for `library.status`.
public struct LibraryCounts: Sendable, Hashable {
    /// Assets in the library (not counting those in Recently Deleted).
    public var assets = 0
    /// Assets in Recently Deleted.
    public var recentlyDeleted = 0
    public var images = 0
    public var videos = 0
    public var files = 0
    public var sidecars = 0
    public var errors = 0
    public var ignored = 0
    public var directories = 0
    public init() {}
}
