import Foundation
import PhotoDaemon
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing

@Suite("Configuration file")
struct ConfigFileTests {
    /// Files and the arguments they stand for.
    static let accepted: [(String, [String])] = [
        ("", []),
        ("\n\n   \n\t\n", []),
        ("# only a comment\n   # an indented one\n", []),
        ("library = /srv/photos", ["--library", "/srv/photos"]),
        ("library=/srv/photos\n", ["--library", "/srv/photos"]),
        ("  library\t=\t/srv/photos  \n", ["--library", "/srv/photos"]),
        // Repeated libraries keep their order.
        ("library = /a\nlibrary = /b\nlibrary = /c", ["--library", "/a", "--library", "/b", "--library", "/c"]),
        // Blanks inside a bare value stay; those around it go.
        ("library = /srv/My Photos  ", ["--library", "/srv/My Photos"]),
        // Quoted paths: blanks at the ends, " #", quotes and backslashes.
        (#"library = "/srv/Family Photos""#, ["--library", "/srv/Family Photos"]),
        (#"library = " /srv/lead and trail ""#, ["--library", " /srv/lead and trail "]),
        (#"library = "/srv/a #1""#, ["--library", "/srv/a #1"]),
        (#"library = "/srv/say \"cheese\" \\ more""#, ["--library", #"/srv/say "cheese" \ more"#]),
        (#"library = '/srv/it is \ literal'"#, ["--library", #"/srv/it is \ literal"#]),
        (#"library = '/srv/"quoted"'"#, ["--library", #"/srv/"quoted""#]),
        // Comments after a value; a '#' inside a word is part of it.
        ("workers = 4   # four cores", ["--workers", "4"]),
        ("workers = 4\t# tab", ["--workers", "4"]),
        (#"library = "/srv/x" # comment"#, ["--library", "/srv/x"]),
        (##"library = "/srv/x"#no blank needed after a quote"##, ["--library", "/srv/x"]),
        ("library = /srv/photos/#2", ["--library", "/srv/photos/#2"]),
        // '=' in a value.
        ("library = /srv/a=b", ["--library", "/srv/a=b"]),
        // A value that starts with dashes is still a value.
        ("library = --odd", ["--library", "--odd"]),
        // Windows line ends and a byte-order mark.
        ("\u{FEFF}library = /a\r\nworkers = 2\r\n", ["--library", "/a", "--workers", "2"]),
        // Every key once, in the file's order.
        ("""
         log-level = debug
         library = /srv/photos
         database = /var/lib/photod/photod.db
         socket = /run/photod/photod.sock
         timezone = Europe/Berlin
         workers = 2
         poll-interval = 60
         retention-days = 0
         max-watches = 1000
         socket-group = 0
         write-group = 0
         journal-max-changes = 500
         journal-max-days = 7
         """,
         ["--log-level", "debug", "--library", "/srv/photos", "--database", "/var/lib/photod/photod.db",
          "--socket", "/run/photod/photod.sock", "--timezone", "Europe/Berlin", "--workers", "2",
          "--poll-interval", "60", "--retention-days", "0", "--max-watches", "1000", "--socket-group", "0",
          "--write-group", "0", "--journal-max-changes", "500", "--journal-max-days", "7"]),
    ]

    @Test(arguments: accepted)
    func accepts(_ text: String, _ arguments: [String]) throws {
        #expect(try ConfigFile.parse(text: text) == arguments)
    }

    /// Files, the line of their error, its code and a part of its message.
    static let rejected: [(String, Int, ConfigFile.ParseError.Code, String)] = [
        ("library /srv/photos", 1, .missingEquals, "expected 'key = value'"),
        ("# fine\n\nlibrary", 3, .missingEquals, "expected 'key = value'"),
        ("= /srv/photos", 1, .missingKey, "without a key"),
        ("libary = /srv/photos", 1, .unknownKey, "did you mean 'library'?"),
        ("pollinterval = 5", 1, .unknownKey, "did you mean 'poll-interval'?"),
        ("--library = /srv/photos", 1, .unknownKey, "without dashes, 'library'"),
        ("colour = blue", 1, .unknownKey, "the keys are library, database"),
        ("help = yes", 1, .unknownKey, "unknown key 'help'"),
        ("Library = /srv", 1, .unknownKey, "did you mean 'library'?"),
        ("library =", 1, .missingValue, "'library' needs a value"),
        ("library =    # nothing", 1, .missingValue, "'library' needs a value"),
        (#"library = """#, 1, .missingValue, "'library' needs a value"),
        (#"library = "/srv/open"#, 1, .badQuote, "no closing \""),
        ("library = '/srv/open", 1, .badQuote, "no closing '"),
        (#"library = "/srv/a" b"#, 1, .badQuote, "unexpected 'b'"),
        (#"library = "C:\photos""#, 1, .badQuote, #"unknown escape '\p'"#),
        (#"library = "/srv/x\"#, 1, .badQuote, "no closing \""),
        ("library = /srv/a\u{7}b", 1, .invalidCharacter, "control character"),
        ("workers = 2\nlibrary = /a\nworkers = 3", 3, .repeatedKey, "'workers' is given twice (first on line 1)"),
        ("log-level = info\r\n\r\nlog-level = debug\r\n", 3, .repeatedKey, "first on line 1"),
    ]

    @Test(arguments: rejected)
    func rejects(_ text: String, _ line: Int, _ code: ConfigFile.ParseError.Code, _ fragment: String) {
        #expect {
            try ConfigFile.parse(text: text)
        } throws: { error in
            guard let error = error as? ConfigFile.ParseError else { return false }
            return error.line == line && error.code == code && error.description.hasPrefix("line \(line): ")
                && error.message.contains(fragment)
        }
    }

    @Test func entriesKeepTheirLines() throws {
        let entries = try ConfigFile.entries(text: "# header\nlibrary = /a\n\nworkers = 2 # x\n")
        #expect(entries == [ConfigFile.Entry(key: "library", value: "/a", line: 2),
                            ConfigFile.Entry(key: "workers", value: "2", line: 4)])
    }

    /// The keys are exactly the options `DaemonOptions` takes with a value.
    @Test func everyKeyIsAnOption() throws {
        for key in ConfigFile.keys {
            let value = switch key.name {
            case "library", "database", "socket": "/x"
            case "trash-root": "/srv"
            case "timezone": "UTC"
            case "socket-group", "write-group": "0"
            case "log-level": "debug"
            case "gazetteer", "default-excludes": "off"
            case "cache-dir": "/x"
            case "cache-size": "1G"
            case "image-pixel-limit": "50000000"
            default: "1"
            }
            let base = key.name == "library" ? [] : ["--library", "/srv"]
            #expect(throws: Never.self, "\(key.name)") {
                _ = try DaemonOptions.parse(base + ["--" + key.name, value], environment: [:])
            }
        }
    }

    /// The file's values are validated by `DaemonOptions.parse`, as on the command line.
    @Test func valuesAreValidatedByTheOptionParser() throws {
        let options = try DaemonOptions.parse(
            try ConfigFile.parse(text: """
                library = "/srv/Family Photos"
                library = /srv/more
                workers = 3
                retention-days = 0
                gazetteer = off
                log-level = debug
                """),
            environment: [:])
        #expect(options.libraries.map(\.string) == ["/srv/Family Photos", "/srv/more"])
        #expect(options.workers == 3)
        #expect(options.retentionDays == 0)
        #expect(options.logLevel == .debug)
        #expect(!options.gazetteer)
        #expect(try DaemonOptions.parse(["--library", "/srv"], environment: [:]).gazetteer)

        #expect {
            try DaemonOptions.parse(try ConfigFile.parse(text: "library = /srv\nworkers = 0"), environment: [:])
        } throws: { error in
            guard case .usage(let message)? = error as? DaemonOptions.ParseOutcome else { return false }
            return message.contains("--workers must be 1...64")
        }
        #expect {
            try DaemonOptions.parse(try ConfigFile.parse(text: "library = /srv\ngazetteer = no"), environment: [:])
        } throws: { error in
            guard case .usage(let message)? = error as? DaemonOptions.ParseOutcome else { return false }
            return message.contains("--gazetteer must be on or off")
        }
    }

    @Test func exclusionsAddToTheDefaultsUnlessTheyAreOff() throws {
        let plain = try DaemonOptions.parse(["--library", "/srv"], environment: [:])
        #expect(plain.exclusions.patterns == PathExclusions.defaultPatterns)
        #expect(plain.summary.contains("excluded @eaDir #recycle #snapshot"))
        let options = try DaemonOptions.parse(
            try ConfigFile.parse(text: "library = /srv\nexclude = \"#archive\"\nexclude = Scans/**/*.tmp\n"), environment: [:])
        #expect(options.exclusions.patterns == PathExclusions.defaultPatterns + ["#archive", "Scans/**/*.tmp"])
        let off = try DaemonOptions.parse(["--library", "/srv", "--exclude=x", "--default-excludes", "off"], environment: [:])
        #expect(off.exclusions.patterns == ["x"])
        #expect(try DaemonOptions.parse(["--library", "/srv", "--default-excludes", "off"], environment: [:]).summary
            .contains("nothing excluded"))
        #expect {
            try DaemonOptions.parse(["--library", "/srv", "--exclude", "a/**b"], environment: [:])
        } throws: { error in
            guard case .usage(let message)? = error as? DaemonOptions.ParseOutcome else { return false }
            return message.contains("exclude pattern 'a/**b'")
        }
    }

    /// The default file shipped in systemd/ sets the example library and nothing else, and every
    /// commented default in it is a valid setting.
    @Test func shippedDefaultFile() throws {
        let url = TestPaths.packageRoot.appendingPathComponent("systemd/photod.conf")
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(try ConfigFile.parse(text: text) == ["--library", "/srv/photos"])

        // Uncomment every "#key = value" line whose key is known (beside the example library,
        // which the commented trash root names).
        let names = Set(ConfigFile.keys.map(\.name))
        var uncommented: [String] = ["library = /srv/photos"]
        var seen = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("#") {
            let body = line.dropFirst()
            guard let equals = body.firstIndex(of: "=") else { continue }
            let key = body[..<equals].trimmingCharacters(in: .whitespaces)
            guard names.contains(key) else { continue }
            seen.insert(key)
            // Groups must exist here: use root's.
            uncommented.append(key.hasSuffix("-group") ? "\(key) = 0" : String(body))
        }
        #expect(seen == names, "every key is shown, commented")
        let arguments = try ConfigFile.parse(text: uncommented.joined(separator: "\n"))
        #expect(throws: Never.self) { _ = try DaemonOptions.parse(arguments, environment: [:]) }
    }
}
