import CSQLite
import CSearch
import PhotoModel

/// `SQLITE_TRANSIENT` is a cast macro Swift cannot import.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// One SQLite connection (`sqlite3*`) and its cache of prepared statements. Not Sendable:
/// each connection has exactly one owner, which serialises every use (the writer's queue,
/// or a reader slot's lock).
public final class Connection {
    let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// The path the connection was opened on, for error messages.
    public let path: String
    /// Told the `PRAGMA synchronous` level in force at each `transaction`'s COMMIT (tests
    /// check that user-state writes commit with FULL).
    var commitObserver: ((Int) -> Void)?

    /// Opens (and creates, when `create` is set) a database file.
    public init(path: String, readOnly: Bool = false, create: Bool = true) throws(StoreError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close_v2(db) }
            throw StoreError(code: .cannotOpen, message: "cannot open database '\(path)': \(message)", sqliteCode: rc)
        }
        handle = db
        self.path = path
        sqlite3_busy_timeout(db, 5_000)
        let registered = photod_search_register(db)
        guard registered == SQLITE_OK else {
            throw StoreError(code: .cannotOpen, message: "cannot open database '\(path)': the search functions: "
                             + String(cString: sqlite3_errstr(registered)), sqliteCode: registered)
        }
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Frees the pages this connection's cache holds that no statement is using
    /// (`sqlite3_db_release_memory`): the next read takes them from the kernel's page cache.
    public func releaseMemory() {
        sqlite3_db_release_memory(handle)
    }

    /// Runs one or more statements that return no rows (schema, pragmas).
    public func execute(_ sql: String) throws(StoreError) {
        var errmsg: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errmsg)
        if rc != SQLITE_OK {
            let message = errmsg.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(errmsg)
            throw Self.error(rc, message, sql: sql)
        }
    }

    /// A prepared statement for `sql`, cached for the connection's lifetime.
    public func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql: sql) }
        let statement = Statement(handle: stmt, connection: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// The statement in `slot`, prepared from `sql` on first use: for the writer's hot
    /// statements, which then cost no lookup in the cache (keyed by their text) per use.
    @inline(__always)
    public func statement(_ slot: inout Statement?, _ sql: @autoclosure () -> String) throws(StoreError) -> Statement {
        if let prepared = slot {
            prepared.reset()
            return prepared
        }
        let prepared = try statement(sql())
        slot = prepared
        return prepared
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` for writes); commits when it returns,
    /// rolls back when it throws.
    ///
    /// A `durable` transaction commits with `PRAGMA synchronous=FULL`: in WAL mode the WAL is
    /// synced at that commit, so a power cut after it returns cannot undo it. Others commit
    /// with the connection's level, `NORMAL` (a power cut may undo the last commits; `kill -9`
    /// cannot): index batches are re-derived from the disk, what a user did is not. The level
    /// in force before is restored after.
    public func transaction<R>(immediate: Bool = true, durable: Bool = false,
                               _ body: () throws(StoreError) -> R) throws(StoreError) -> R {
        var restore: Int64?
        if durable {
            restore = try scalar("PRAGMA synchronous").int64
            if restore ?? 0 < 2 { try execute("PRAGMA synchronous=FULL") } else { restore = nil }
        }
        defer { if let restore { try? execute("PRAGMA synchronous=\(restore)") } }
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            if let commitObserver { commitObserver(Int(try scalar("PRAGMA synchronous").int64 ?? -1)) }
            try execute("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// A single value from a query (`PRAGMA user_version`, `SELECT count(*)`).
    public func scalar(_ sql: String, _ bindings: SQLValue...) throws(StoreError) -> SQLValue {
        let s = try statement(sql)
        defer { s.reset() }
        try s.bind(bindings)
        guard try s.step() else { return .null }
        return s.value(0)
    }

    /// The statements stepped to a row and not reset: each holds this connection's read
    /// snapshot open (in autocommit mode the read transaction lasts until they are reset).
    public var busyStatements: [String] {
        var out: [String] = []
        var next = sqlite3_next_stmt(handle, nil)
        while let stmt = next {
            if sqlite3_stmt_busy(stmt) != 0 { out.append(sqlite3_sql(stmt).map { String(cString: $0) } ?? "?") }
            next = sqlite3_next_stmt(handle, stmt)
        }
        return out
    }

    /// Whether a transaction is open on this connection.
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// The rowid of the last insert.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    func error(_ rc: Int32, sql: String? = nil) -> StoreError {
        Self.error(rc, String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    static func error(_ rc: Int32, _ message: String, sql: String?) -> StoreError {
        let code: StoreError.Code
        switch rc & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: code = .busy
        case SQLITE_FULL: code = .full
        case SQLITE_IOERR: code = .ioError
        case SQLITE_CORRUPT, SQLITE_NOTADB: code = .corrupt
        case SQLITE_CONSTRAINT: code = .constraint
        case SQLITE_CANTOPEN: code = .cannotOpen
        default: code = .sqlite
        }
        return StoreError(code: code, message: message, sql: sql, sqliteCode: rc)
    }
}

/// A value bound to or read from SQL.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var int64: Int64? { if case .integer(let v) = self { return v }; return nil }
    public var double: Double? {
        switch self {
        case .real(let v): return v
        case .integer(let v): return Double(v)
        default: return nil
        }
    }
    public var string: String? { if case .text(let v) = self { return v }; return nil }
    public var bytes: [UInt8]? { if case .blob(let v) = self { return v }; return nil }
}

/// A prepared statement (`sqlite3_stmt*`), owned by its connection's cache.
public final class Statement {
    let handle: OpaquePointer
    unowned let connection: Connection
    let sql: String
    /// Parameter indexes of the column lists bound to this statement (see `ColumnList`).
    private var listIndexes: [ObjectIdentifier: [Int32]] = [:]
    /// Parameter indexes of the names bound to this statement, by the name literal's address.
    private var namedIndexes: [(UnsafeRawPointer, Int32)] = []

    init(handle: OpaquePointer, connection: Connection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds values to parameters 1...n.
    public func bind(_ values: [SQLValue]) throws(StoreError) {
        for (i, v) in values.enumerated() { try bind(v, at: Int32(i + 1)) }
    }

    public func bind(_ value: SQLValue, at index: Int32) throws(StoreError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = sqlite3_bind_text(handle, index, v, -1, sqliteTransient)
        case .blob(let v):
            rc = v.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), sqliteTransient) }
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }

    @inline(__always) public func bind(_ v: Int64, at i: Int32) { sqlite3_bind_int64(handle, i, v) }
    @inline(__always) public func bind(_ v: Int, at i: Int32) { sqlite3_bind_int64(handle, i, Int64(v)) }
    @inline(__always) public func bind(_ v: Int?, at i: Int32) {
        if let v { sqlite3_bind_int64(handle, i, Int64(v)) } else { sqlite3_bind_null(handle, i) }
    }
    @inline(__always) public func bind(_ v: Double?, at i: Int32) {
        if let v { sqlite3_bind_double(handle, i, v) } else { sqlite3_bind_null(handle, i) }
    }
    @inline(__always) public func bind(_ v: String?, at i: Int32) {
        if let v { sqlite3_bind_text(handle, i, v, -1, sqliteTransient) } else { sqlite3_bind_null(handle, i) }
    }
    @inline(__always) public func bind(_ v: [UInt8], at i: Int32) {
        v.withUnsafeBytes { _ = sqlite3_bind_blob(handle, i, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), sqliteTransient) }
    }

    /// Binds `value` to the named parameter `name` (`":lensModel"`). A name the statement
    /// does not have is a bug in the SQL next to the call: it traps. The index is looked up
    /// once per statement and name (by the literal's address: no string compared per bind).
    @inline(__always) public func bind(_ name: StaticString, to value: some SQLBindable) {
        value.bind(to: self, at: parameterIndex(name))
    }

    private func parameterIndex(_ name: StaticString) -> Int32 {
        let key = UnsafeRawPointer(name.utf8Start)
        for (address, index) in namedIndexes where address == key { return index }
        let text = name.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
        let index = sqlite3_bind_parameter_index(handle, text)
        precondition(index > 0, "no parameter \(text) in: \(sql)")
        namedIndexes.append((key, index))
        return index
    }

    /// The parameter index of each of a list's names, looked up once per statement and list.
    @inline(__always)
    func parameterIndexes(_ list: ObjectIdentifier, _ names: () -> [String]) -> [Int32] {
        if let known = listIndexes[list] { return known }
        let indexes = names().map { name in
            let index = sqlite3_bind_parameter_index(handle, name)
            precondition(index > 0, "no parameter \(name) in: \(sql)")
            return index
        }
        listIndexes[list] = indexes
        return indexes
    }

    /// Steps once: `true` when a row is available, `false` when done.
    @discardableResult
    public func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, sql: sql)
        }
    }

    /// Runs the statement to completion (an INSERT or UPDATE), then resets it.
    public func run() throws(StoreError) {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    public func isNull(_ col: Int32) -> Bool { sqlite3_column_type(handle, col) == SQLITE_NULL }
    public func int64(_ col: Int32) -> Int64 { sqlite3_column_int64(handle, col) }
    public func int(_ col: Int32) -> Int { Int(sqlite3_column_int64(handle, col)) }
    public func optionalInt(_ col: Int32) -> Int? { isNull(col) ? nil : int(col) }
    public func optionalInt64(_ col: Int32) -> Int64? { isNull(col) ? nil : int64(col) }
    public func double(_ col: Int32) -> Double { sqlite3_column_double(handle, col) }
    public func optionalDouble(_ col: Int32) -> Double? { isNull(col) ? nil : double(col) }
    public func string(_ col: Int32) -> String {
        guard let p = sqlite3_column_text(handle, col) else { return "" }
        let n = Int(sqlite3_column_bytes(handle, col))
        return String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self)
    }
    public func optionalString(_ col: Int32) -> String? { isNull(col) ? nil : string(col) }
    /// Column `col`'s text in place (valid only inside `body`): no string made.
    public func withText<R>(_ col: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        guard let p = sqlite3_column_text(handle, col) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: p, count: Int(sqlite3_column_bytes(handle, col))))
    }
    /// Column `col`'s blob in place (valid only inside `body`): no array made.
    public func withBlob<R>(_ col: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let n = Int(sqlite3_column_bytes(handle, col))
        guard n > 0, let p = sqlite3_column_blob(handle, col) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: p.assumingMemoryBound(to: UInt8.self), count: n))
    }
    public func bytes(_ col: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, col))
        guard n > 0, let p = sqlite3_column_blob(handle, col) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// Column `col` as a tagged value.
    public func value(_ col: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, col) {
        case SQLITE_INTEGER: return .integer(int64(col))
        case SQLITE_FLOAT: return .real(double(col))
        case SQLITE_TEXT: return .text(string(col))
        case SQLITE_BLOB: return .blob(bytes(col))
        default: return .null
        }
    }
}

/// A Swift value that binds to an SQL parameter.
public protocol SQLBindable {
    /// Binds the value to parameter `index` of `statement`.
    func bind(to statement: Statement, at index: Int32)
}

extension Int64: SQLBindable {
    @inline(__always) public func bind(to s: Statement, at i: Int32) { sqlite3_bind_int64(s.handle, i, self) }
}

extension Int: SQLBindable {
    @inline(__always) public func bind(to s: Statement, at i: Int32) { sqlite3_bind_int64(s.handle, i, Int64(self)) }
}

extension Bool: SQLBindable {
    @inline(__always) public func bind(to s: Statement, at i: Int32) { sqlite3_bind_int64(s.handle, i, self ? 1 : 0) }
}

extension Double: SQLBindable {
    @inline(__always) public func bind(to s: Statement, at i: Int32) { sqlite3_bind_double(s.handle, i, self) }
}

extension String: SQLBindable {
    @inline(__always) public func bind(to s: Statement, at i: Int32) {
        sqlite3_bind_text(s.handle, i, self, -1, sqliteTransient)
    }
}

extension Array: SQLBindable where Element == UInt8 {
    /// A blob (a path or a name as bytes).
    @inline(__always) public func bind(to s: Statement, at i: Int32) { s.bind(self, at: i) }
}

extension PathBytes: SQLBindable {
    /// A path is stored as its bytes (a blob).
    @inline(__always) public func bind(to s: Statement, at i: Int32) { s.bind(bytes, at: i) }
}

extension SQLValue: SQLBindable {
    public func bind(to s: Statement, at i: Int32) { try? s.bind(self, at: i) }
}

extension Optional: SQLBindable where Wrapped: SQLBindable {
    /// NULL when absent.
    @inline(__always) public func bind(to s: Statement, at i: Int32) {
        if let self { self.bind(to: s, at: i) } else { sqlite3_bind_null(s.handle, i) }
    }
}
