/// Which paths below a library root are not part of the library: the operator's `--exclude`
/// patterns and, unless switched off, the folders and files NAS systems and operating systems
/// make for themselves (thumbnail caches, recycle bins, snapshots, AppleDouble files). Pure.
///
/// A pattern is a glob matched against the path below the root (`2024/@eaDir`, without a
/// leading slash), byte for byte, case-sensitive: `*` is any run of bytes within a name, `?` one
/// byte, `[abc]`, `[a-z]` and `[!abc]` a byte of (or not of) a set, `**` any number of whole
/// names (none included), `\` takes the next byte literally. A pattern without a `/` is a name
/// at any depth (`@eaDir` is `**/@eaDir`); a leading `/` anchors one at the root. A directory
/// that matches is left out with everything below it; so is a file.
public struct PathExclusions: Sendable, Equatable {
    /// The patterns in force, as written (the defaults first when they are on).
    public let patterns: [String]
    private let compiled: [Pattern]
    /// The patterns that are a plain name at any depth (most defaults): one set lookup for all
    /// of them. The walk asks for every entry, so this is the case kept cheap.
    private let names: Set<PathBytes>
    /// The others.
    private let globs: [Pattern]

    /// Nothing excluded.
    public static let none = PathExclusions(checked: [])

    /// What a library on a NAS or a shared disk holds that nobody photographed: Synology's
    /// thumbnail and metadata folders (`@eaDir`), recycle bin and snapshots; QNAP's; Windows',
    /// macOS's and Linux desktops' recycle bins, indexes and resource forks; ZFS, NetApp and
    /// snapper snapshots; `fsck`'s `lost+found`. (Dot-names are never indexed anyway; those
    /// listed say so here too, for the operator reading `--check-config`.)
    public static let defaultPatterns: [String] = [
        "@eaDir", "#recycle", "#snapshot", "@tmp", "@sharebin",       // Synology DSM
        "@Recycle", "@Recently-Snapshot", ".@__thumb", "@__thumb",     // QNAP QTS
        "$RECYCLE.BIN", "RECYCLER", "System Volume Information",      // Windows
        "Thumbs.db", "desktop.ini",
        ".AppleDouble", "._*", ".DS_Store", ".Spotlight-V100",        // macOS
        ".fseventsd", ".Trashes", ".TemporaryItems", "Network Trash Folder", "Temporary Items",
        ".zfs", ".snapshot", ".snapshots",                            // TrueNAS/ZFS, NetApp, snapper
        ".Trash-*", "lost+found",                                     // Linux
    ]

    /// The exclusions of `patterns`, after the defaults when `defaults` is on.
    /// - Throws: `PatternError` naming the first pattern that is not a valid glob.
    public init(patterns: [String], defaults: Bool = true) throws(PatternError) {
        let all = (defaults ? Self.defaultPatterns : []) + patterns
        var compiled: [Pattern] = []
        for text in all { compiled.append(try Pattern(text)) }
        self.init(checked: compiled)
    }

    private init(checked: [Pattern]) {
        compiled = checked
        patterns = checked.map(\.text)
        names = Set(checked.compactMap { $0.literalName.map(PathBytes.init) })
        globs = checked.filter { $0.literalName == nil }
    }

    public static func == (a: PathExclusions, b: PathExclusions) -> Bool { a.patterns == b.patterns }

    public var isEmpty: Bool { compiled.isEmpty }

    /// A pattern that is not a valid glob, and why.
    public struct PatternError: Error, Equatable, CustomStringConvertible {
        public var pattern: String
        public var reason: String
        public var description: String { "exclude pattern '\(pattern)': \(reason)" }
    }

    /// Whether the entry `name` of the directory `directory` (its names below the root, outermost
    /// first) is excluded. The directories themselves are taken as not excluded (a walk does not
    /// enter one that is).
    public func excludes(_ name: [UInt8], in directory: [[UInt8]]) -> Bool {
        guard !compiled.isEmpty else { return false }
        if !names.isEmpty, names.contains(PathBytes(name)) { return true }
        return globs.contains { $0.matches(directory, name) }
    }

    /// Whether `path` (below `root`) or a directory between it and `root` is excluded; `root`
    /// itself and paths outside it are not.
    public func excludes(_ path: PathBytes, below root: PathBytes) -> Bool {
        let root = Self.trimmed(root)
        guard !compiled.isEmpty, path != root, path.isWithin(root) else { return false }
        var rest = path.bytes.dropFirst(root.bytes.count)
        while rest.first == UInt8(ascii: "/") { rest = rest.dropFirst() }
        let names = rest.split(separator: UInt8(ascii: "/")).map(Array.init)
        var above: [[UInt8]] = []
        for name in names {
            if excludes(name, in: above) { return true }
            above.append(name)
        }
        return false
    }

    /// Whether `path` is excluded below the innermost of `roots` holding it.
    public func excludes(_ path: PathBytes, roots: [PathBytes]) -> Bool {
        guard !compiled.isEmpty, let root = Self.innermost(of: roots, holding: path) else { return false }
        return excludes(path, below: root)
    }

    /// The names of `directory` below the innermost root of `roots` holding it (empty for a
    /// root; nil outside them), for `excludes(_:in:)`.
    public static func names(of directory: PathBytes, roots: [PathBytes]) -> [[UInt8]]? {
        guard let root = innermost(of: roots, holding: directory) else { return nil }
        return directory.bytes.dropFirst(root.bytes.count).split(separator: UInt8(ascii: "/")).map(Array.init)
    }

    /// The innermost of `roots` that `path` is or lies below (without a trailing slash).
    private static func innermost(of roots: [PathBytes], holding path: PathBytes) -> PathBytes? {
        roots.lazy.map(trimmed).filter { path.isWithin($0) }.max { $0.bytes.count < $1.bytes.count }
    }

    /// `path` without a trailing slash (`/` stays).
    private static func trimmed(_ path: PathBytes) -> PathBytes {
        guard path.bytes.count > 1, path.bytes.last == UInt8(ascii: "/") else { return path }
        return PathBytes(Array(path.bytes.dropLast()))
    }

    // MARK: Globs

    /// One pattern, split into names: each a `**` or a name glob.
    private struct Pattern: Sendable {
        enum Segment: Sendable {
            case anyNames
            case name([Token])
        }
        enum Token: Sendable, Equatable {
            case byte(UInt8)
            case anyByte
            case anyRun
            case set([ClosedRange<UInt8>], negated: Bool)
        }

        let text: String
        let segments: [Segment]
        /// `**/NAME`: only the entry's own name is compared (every default pattern; the walk
        /// asks for each entry, so this case is kept cheap).
        let lastNameOnly: [Token]?
        /// `**/NAME` where NAME has no wildcard: the name itself.
        var literalName: [UInt8]? {
            guard let tokens = lastNameOnly else { return nil }
            var name: [UInt8] = []
            for token in tokens {
                guard case .byte(let b) = token else { return nil }
                name.append(b)
            }
            return name
        }

        init(_ text: String) throws(PatternError) {
            self.text = text
            var bytes = Array(text.utf8)
            func fail(_ reason: String) -> PatternError { PatternError(pattern: text, reason: reason) }
            guard !bytes.isEmpty else { throw fail("it is empty") }
            guard !bytes.contains(0) else { throw fail("it holds a NUL byte") }
            if bytes.first == UInt8(ascii: "/") {
                bytes.removeFirst()
            } else if !bytes.contains(UInt8(ascii: "/")) {
                bytes = Array("**/".utf8) + bytes
            }
            while bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
            guard !bytes.isEmpty else { throw fail("it names the root itself") }
            var segments: [Segment] = []
            for part in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
                if part.elementsEqual("**".utf8) {
                    if case .anyNames = segments.last { continue }
                    segments.append(.anyNames)
                } else {
                    guard !part.elementsEqual(".".utf8), !part.elementsEqual("..".utf8) else {
                        throw fail("'.' and '..' name no entry below the root")
                    }
                    segments.append(.name(try Self.tokens(Array(part), fail)))
                }
            }
            self.segments = segments
            if segments.count == 2, case .anyNames = segments[0], case .name(let tokens) = segments[1] {
                lastNameOnly = tokens
            } else {
                lastNameOnly = nil
            }
        }

        private static func tokens(_ part: [UInt8], _ fail: (String) -> PatternError) throws(PatternError) -> [Token] {
            var tokens: [Token] = []
            var i = 0
            while i < part.count {
                let c = part[i]
                switch c {
                case UInt8(ascii: "\\"):
                    guard i + 1 < part.count else { throw fail("it ends with a lone '\\'") }
                    tokens.append(.byte(part[i + 1]))
                    i += 2
                case UInt8(ascii: "*"):
                    guard !part[(i + 1)...].starts(with: [UInt8(ascii: "*")]) else {
                        throw fail("'**' must be a whole name (a/**/b), not part of one")
                    }
                    tokens.append(.anyRun)
                    i += 1
                case UInt8(ascii: "?"):
                    tokens.append(.anyByte)
                    i += 1
                case UInt8(ascii: "["):
                    var j = i + 1
                    let negated = j < part.count && (part[j] == UInt8(ascii: "!") || part[j] == UInt8(ascii: "^"))
                    if negated { j += 1 }
                    var ranges: [ClosedRange<UInt8>] = []
                    var first = true
                    while j < part.count, part[j] != UInt8(ascii: "]") || first {
                        first = false
                        var low = part[j]
                        if low == UInt8(ascii: "\\"), j + 1 < part.count {
                            j += 1
                            low = part[j]
                        }
                        if j + 2 < part.count, part[j + 1] == UInt8(ascii: "-"), part[j + 2] != UInt8(ascii: "]") {
                            let high = part[j + 2]
                            guard low <= high else { throw fail("the range \(Character(Unicode.Scalar(low)))-\(Character(Unicode.Scalar(high))) is reversed") }
                            ranges.append(low...high)
                            j += 3
                        } else {
                            ranges.append(low...low)
                            j += 1
                        }
                    }
                    guard j < part.count else { throw fail("a '[' has no closing ']'") }
                    tokens.append(.set(ranges, negated: negated))
                    i = j + 1
                default:
                    tokens.append(.byte(c))
                    i += 1
                }
            }
            return tokens
        }

        func matches(_ directory: [[UInt8]], _ name: [UInt8]) -> Bool {
            if let lastNameOnly { return Self.match(lastNameOnly, name[...]) }
            var names = directory
            names.append(name)
            return Self.match(segments[...], names[...])
        }

        private static func match(_ segments: ArraySlice<Segment>, _ names: ArraySlice<[UInt8]>) -> Bool {
            guard let first = segments.first else { return names.isEmpty }
            switch first {
            case .anyNames:
                let rest = segments.dropFirst()
                if rest.isEmpty { return true }
                var tail = names
                while true {
                    if match(rest, tail) { return true }
                    guard !tail.isEmpty else { return false }
                    tail = tail.dropFirst()
                }
            case .name(let tokens):
                guard let name = names.first, match(tokens, name[...]) else { return false }
                return match(segments.dropFirst(), names.dropFirst())
            }
        }

        /// One name against one name glob (backtracking on the last `*` only: linear enough).
        static func match(_ tokens: [Token], _ name: ArraySlice<UInt8>) -> Bool {
            var t = 0
            var n = name.startIndex
            var star: (token: Int, byte: Int)?
            while n < name.endIndex {
                if t < tokens.count {
                    switch tokens[t] {
                    case .anyRun:
                        star = (t, n)
                        t += 1
                        continue
                    case .anyByte:
                        t += 1
                        n += 1
                        continue
                    case .byte(let b) where b == name[n]:
                        t += 1
                        n += 1
                        continue
                    case .set(let ranges, let negated) where ranges.contains { $0.contains(name[n]) } != negated:
                        t += 1
                        n += 1
                        continue
                    default:
                        break
                    }
                }
                guard let s = star else { return false }
                t = s.token + 1
                n = s.byte + 1
                star = (s.token, s.byte + 1)
            }
            while t < tokens.count, tokens[t] == .anyRun { t += 1 }
            return t == tokens.count
        }
    }
}
