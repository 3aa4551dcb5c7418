import PhotoSystem

/// photod's keys in `/etc/photod/photod.conf` (`ConfigFile`'s syntax).
extension ConfigFile {
    /// Every key, in `photod --help`'s order.
    public static let keys: [ConfigFile.Key] = [
        ConfigFile.Key(name: "library", repeatable: true),
        ConfigFile.Key(name: "database", repeatable: false),
        ConfigFile.Key(name: "socket", repeatable: false),
        ConfigFile.Key(name: "timezone", repeatable: false),
        ConfigFile.Key(name: "workers", repeatable: false),
        ConfigFile.Key(name: "poll-interval", repeatable: false),
        ConfigFile.Key(name: "retention-days", repeatable: false),
        ConfigFile.Key(name: "max-watches", repeatable: false),
        ConfigFile.Key(name: "socket-group", repeatable: false),
        ConfigFile.Key(name: "write-group", repeatable: false),
        ConfigFile.Key(name: "journal-max-changes", repeatable: false),
        ConfigFile.Key(name: "journal-max-days", repeatable: false),
        ConfigFile.Key(name: "cache-dir", repeatable: false),
        ConfigFile.Key(name: "cache-size", repeatable: false),
        ConfigFile.Key(name: "image-pixel-limit", repeatable: false),
        ConfigFile.Key(name: "image-workers", repeatable: false),
        ConfigFile.Key(name: "gazetteer", repeatable: false),
        ConfigFile.Key(name: "trash-root", repeatable: true),
        ConfigFile.Key(name: "exclude", repeatable: true),
        ConfigFile.Key(name: "default-excludes", repeatable: false),
        ConfigFile.Key(name: "log-level", repeatable: false),
    ]

    /// photod's configuration file as arguments.
    public static func parse(text: String) throws(ParseError) -> [String] { try parse(text: text, keys: keys) }

    /// photod's configuration file's settings.
    public static func entries(text: String) throws(ParseError) -> [Entry] { try entries(text: text, keys: keys) }
}
