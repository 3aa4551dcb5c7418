/// An error from the store: a code callers can branch on, a message, and the SQL or path
/// it concerns.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The database could not be opened or created.
        public static let cannotOpen = Code(rawValue: "cannotOpen")
        /// Another photod holds the database.
        public static let locked = Code(rawValue: "locked")
        /// The database was written by a newer photod; this one refuses to touch it.
        public static let newerSchema = Code(rawValue: "newerSchema")
        /// SQLite is busy (another connection holds a lock) beyond the timeout.
        public static let busy = Code(rawValue: "busy")
        /// The disk or the file system is full.
        public static let full = Code(rawValue: "full")
        /// The disk failed a read, write or fsync of the database (SQLite's `SQLITE_IOERR`): what
        /// was being written is not on disk, and what was written before may not be either.
        public static let ioError = Code(rawValue: "ioError")
        /// The file is not a database or is corrupt.
        public static let corrupt = Code(rawValue: "corrupt")
        /// A constraint was violated (a bug, or a write that lost a race).
        public static let constraint = Code(rawValue: "constraint")
        /// Any other SQLite error.
        public static let sqlite = Code(rawValue: "sqlite")
        /// A write names an asset, album or folder that does not exist (`ids` in the message).
        public static let notFound = Code(rawValue: "notFound")
        /// A write the data refuses (an album moved into itself, an empty title).
        public static let invalid = Code(rawValue: "invalid")
        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String
    /// The statement that failed, when there is one.
    public var sql: String?
    /// SQLite's extended result code, when the error came from SQLite.
    public var sqliteCode: Int32?
    /// For `notFound`: the ids that do not exist.
    public var missing: [String] = []

    public init(code: Code, message: String, sql: String? = nil, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
        self.sqliteCode = sqliteCode
    }

    /// A write named ids that do not exist (`kind`: "asset", "album", "folder").
    public static func notFound(_ kind: String, _ ids: [String]) -> StoreError {
        var e = StoreError(code: .notFound, message: "no \(kind)\(ids.count == 1 ? "" : "s") " + ids.prefix(20).joined(separator: ", ")
                               + (ids.count > 20 ? " (and \(ids.count - 20) more)" : ""))
        e.missing = ids
        return e
    }

    /// `error` as a store error: itself when it is one (what the store's closures throw), else
    /// an `sqlite` error with its description.
    public static func wrapping(_ error: any Error) -> StoreError {
        (error as? StoreError) ?? StoreError(code: .sqlite, message: "\(error)")
    }

    /// A stored row that does not decode (a damaged database or a bug).
    static func undecodable(table: String, key: String) -> StoreError {
        StoreError(code: .corrupt, message: "a row of '\(table)' cannot be decoded (\(key))")
    }

    public var description: String {
        var s = "\(code): \(message)"
        if let sql { s += " [\(sql.prefix(200))]" }
        return s
    }
}
