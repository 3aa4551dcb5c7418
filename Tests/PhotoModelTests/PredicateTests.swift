import PhotoModel
import PhotoTesting
import Testing

@Suite("Fetch predicates: parsing, type checking, errors, limits, sort strings")
struct PredicateTests {
    /// Good inputs and the canonical text each parses to.
    static let good: [(String, String)] = [
        (#"mediaType == "image""#, #"mediaType == "image""#),
        (#"mediaType != 'video'"#, #"mediaType != "video""#),
        (#"mediaType IN {"image", "video"}"#, #"mediaType IN {"image", "video"}"#),
        (#"mediaType in {}"#, #"mediaType IN {}"#),
        (#"subtypes CONTAINS "raw""#, #"subtypes CONTAINS "raw""#),
        (#"subtypes == {}"#, #"subtypes == {}"#),
        (#"subtypes != {"raw", "live", "raw"}"#, #"subtypes != {"live", "raw"}"#),
        (#"localDateTime >= "2019-05-04T13:22:10""#, #"localDateTime >= "2019-05-04T13:22:10""#),
        (#"localDateTime < "2019-05-04T13:22:10.054""#, #"localDateTime < "2019-05-04T13:22:10.054""#),
        (#"localDateTime < "2019-05-04T13:22:10.000""#, #"localDateTime < "2019-05-04T13:22:10""#),
        (#"localDateTime < "2019-05-04""#, #"localDateTime < "2019-05-04T00:00:00""#),
        (#"localDateTime BETWEEN "2019-01-01" AND "2019-12-31T23:59:59.999""#,
         #"localDateTime BETWEEN "2019-01-01T00:00:00" AND "2019-12-31T23:59:59.999""#),
        (#"localDate == "2020-02-29""#, #"localDate == "2020-02-29""#),
        (#"localDate IN {"0001-01-01", "9999-12-31"}"#, #"localDate IN {"0001-01-01", "9999-12-31"}"#),
        (#"addedDate > "2026-11-29T12:00:00Z""#, #"addedDate > "2026-11-29T12:00:00Z""#),
        (#"addedDate > "2026-11-29T12:00:00.500Z""#, #"addedDate > "2026-11-29T12:00:00.500Z""#),
        (#"addedDate <= "1969-12-31""#, #"addedDate <= "1969-12-31T00:00:00Z""#),
        ("pixelWidth >= 4000", "pixelWidth >= 4000"),
        ("pixelHeight < -1", "pixelHeight < -1"),
        ("pixelWidth == null", "pixelWidth == null"),
        ("pixelWidth != NULL", "pixelWidth != null"),
        ("pixelWidth BETWEEN 100 AND 200", "pixelWidth BETWEEN 100 AND 200"),
        ("pixelWidth IN {1, 2, 3}", "pixelWidth IN {1, 2, 3}"),
        ("latitude > -33.5", "latitude > -33.5"),
        ("latitude != null", "latitude != null"),
        ("longitude <= 151", "longitude <= 151.0"),
        ("duration > 1.5e1", "duration > 15.0"),
        ("duration < 1E-5", "duration < 1e-05"),
        ("isFavorite == true", "isFavorite == true"),
        ("isHidden != FALSE", "isHidden != false"),
        (#"make == "Canon""#, #"make == "Canon""#),
        (#"make CONTAINS "non""#, #"make CONTAINS "non""#),
        (#"model BEGINSWITH 'EOS \'R\''"#, #"model BEGINSWITH "EOS 'R'""#),
        (#"make IN {"Canon", "NIKON CORPORATION"}"#, #"make IN {"Canon", "NIKON CORPORATION"}"#),
        (#"make == null"#, #"make == null"#),
        (#"path BEGINSWITH "/photos/2019/""#, #"path BEGINSWITH "/photos/2019/""#),
        (#"path CONTAINS "\xff\xfe""#, #"path CONTAINS "\xFF\xFE""#),
        (#"path == "/a/caf\u{e9}.jpg""#, #"path == "/a/café.jpg""#),
        (#"path == "tab\there\nline\\ \"q\"""#, #"path == "tab\there\nline\\ \"q\"""#),
        (#"keywords CONTAINS "Beach""#, #"keywords CONTAINS "Beach""#),
        (#"keywords IN {"sea", "sand"}"#, #"keywords IN {"sea", "sand"}"#),
        (#"make == "'); DROP TABLE assets; --""#, #"make == "'); DROP TABLE assets; --""#),
        // Precedence: NOT over AND over OR; keywords in any case.
        (#"isFavorite == true or mediaType == "video" and not isHidden == true"#,
         #"isFavorite == true OR mediaType == "video" AND NOT isHidden == true"#),
        (#"(isFavorite == true OR mediaType == "video") AND pixelWidth > 10"#,
         #"(isFavorite == true OR mediaType == "video") AND pixelWidth > 10"#),
        ("NOT NOT isFavorite == true", "NOT NOT isFavorite == true"),
        ("NOT (isFavorite == true AND isHidden == false)", "NOT (isFavorite == true AND isHidden == false)"),
        ("((((isFavorite == true))))", "isFavorite == true"),
        ("isFavorite == true AND (isHidden == true AND pixelWidth > 1)",
         "isFavorite == true AND (isHidden == true AND pixelWidth > 1)"),
        ("  pixelWidth>1\tAND\npixelHeight<2  ", "pixelWidth > 1 AND pixelHeight < 2"),
    ]

    @Test("Good predicates parse to their canonical text, which parses back to the same tree", arguments: good)
    func goodInputs(input: String, canonical: String) throws {
        let tree = try AssetPredicate.parse(input)
        #expect(tree.description == canonical)
        #expect(try AssetPredicate.parse(tree.description) == tree)
    }

    @Test("NOT binds tighter than AND, AND tighter than OR; chains are one node")
    func precedence() throws {
        let a = PredicateComparison(key: .isFavorite, operation: .compare(.equal, .boolean(true)))
        let b = PredicateComparison(key: .isHidden, operation: .compare(.equal, .boolean(true)))
        let c = PredicateComparison(key: .pixelWidth, operation: .compare(.greater, .integer(1)))
        let tree = try AssetPredicate.parse("isFavorite == true OR isHidden == true AND NOT pixelWidth > 1 AND pixelWidth > 1")
        #expect(tree == .or([.comparison(a), .and([.comparison(b), .not(.comparison(c)), .comparison(c)])]))
        #expect(try AssetPredicate.parse("NOT isFavorite == true AND isHidden == true")
            == .and([.not(.comparison(a)), .comparison(b)]))
        #expect(try AssetPredicate.parse("isFavorite == true OR isHidden == true OR pixelWidth > 1")
            == .or([.comparison(a), .comparison(b), .comparison(c)]))
    }

    @Test("Typed values: dates, instants, bytes, sets")
    func values() throws {
        func value(_ text: String) throws -> PredicateComparison.Operation {
            guard case .comparison(let c) = try AssetPredicate.parse(text) else { throw AssetPredicateError(code: .syntax, position: 0, expected: "", found: "") }
            return c.operation
        }
        #expect(try value(#"localDate == "1970-01-02""#) == .compare(.equal, .localDate(day: 1)))
        #expect(try value(#"localDate == "1969-12-31""#) == .compare(.equal, .localDate(day: -1)))
        #expect(try value(#"addedDate == "1970-01-01T00:00:01.500Z""#) == .compare(.equal, .instant(milliseconds: 1500)))
        #expect(try value(#"addedDate == "2026-11-29""#) == .compare(.equal, .instant(milliseconds: 1_795_910_400_000)))
        #expect(try value(#"path == "\x80/\u{1F600}""#) == .compare(.equal, .bytes([0x80, 0x2F, 0xF0, 0x9F, 0x98, 0x80])))
        #expect(try value(#"subtypes == {"selfie", "raw"}"#) == .compare(.equal, .subtypes([.selfie, .raw])))
        #expect(try value(#"make == "\u{e9}""#) == .compare(.equal, .text("é")))
        let t = try #require(PredicateDateTime(year: 2019, month: 5, day: 4, hour: 13, minute: 22, second: 10, millisecond: 54))
        #expect(try value(#"localDateTime == "2019-05-04T13:22:10.054""#) == .compare(.equal, .localDateTime(t)))
        #expect(t.secondsText == "2019-05-04T13:22:10")
        #expect(t.millisecondsText == "2019-05-04T13:22:10.054")
        #expect(PredicateDateTime(LocalDateTime(iso: "2019-05-04T13:22:10")!) < t)
    }

    /// Bad inputs: the exact position, the code, and the message.
    static let bad: [(String, Int, AssetPredicateError.Code, String)] = [
        ("pixelWidth == ", 14, .syntax, "expected a value after '==' at 14, found end of input"),
        ("", 0, .syntax, "expected a key, '(' or NOT at 0, found end of input"),
        ("   ", 3, .syntax, "expected a key, '(' or NOT at 3, found end of input"),
        ("pixelWidth = 3", 11, .syntax, "expected an operator after 'pixelWidth' (==, !=, <, <=, >, >=, IN, BETWEEN) at 11, found '=' (did you mean '=='?)"),
        ("isFavorite == true && isHidden == true", 19, .syntax, "expected AND, OR or end of input at 19, found '&&' (did you mean AND?)"),
        ("width > 3", 0, .unknownKey,
         "expected a key (one of mediaType, subtypes, localDateTime, localDate, pixelWidth, pixelHeight, isFavorite, isHidden, make, model, path, latitude, longitude, duration, addedDate, keywords, frameRate, bitRate, videoCodec, audioCodec, city, region, country, countryCode, location) at 0, found 'width'"),
        ("isFavorite == true AND MediaType == \"image\"", 23, .unknownKey, ""),
        (#"mediaType == "photo""#, 13, .invalidValue, #"expected one of "image", "video" for 'mediaType' at 13, found the string "photo""#),
        (#"mediaType == 1"#, 13, .typeMismatch, #"expected one of "image", "video" for 'mediaType' at 13, found the number 1"#),
        (#"pixelWidth == "wide""#, 14, .typeMismatch, #"expected an integer for 'pixelWidth' at 14, found the string "wide""#),
        ("pixelWidth == 1.5", 14, .typeMismatch, "expected an integer for 'pixelWidth' at 14, found the number 1.5"),
        ("pixelWidth == 99999999999999999999", 14, .invalidValue, ""),
        ("latitude == true", 12, .typeMismatch, "expected a number for 'latitude' at 12, found 'true'"),
        ("latitude < 1e999", 11, .invalidValue, "expected a finite number for 'latitude' at 11, found the number 1e999"),
        ("isFavorite == 1", 14, .typeMismatch, "expected true or false for 'isFavorite' at 14, found the number 1"),
        ("isFavorite < true", 11, .unsupportedOperator, "expected an operator 'isFavorite' takes (==, !=) at 11, found '<'"),
        (#"path < "/a""#, 5, .unsupportedOperator, ""),
        (#"keywords == "sea""#, 9, .unsupportedOperator, ""),
        (#"subtypes CONTAINS "bokeh""#, 18, .invalidValue, ""),
        (#"subtypes == "raw""#, 12, .typeMismatch, ""),
        (#"subtypes == {"raw", "bokeh"}"#, 20, .invalidValue, ""),
        ("mediaType == null", 13, .typeMismatch, ""),
        ("pixelWidth < null", 13, .typeMismatch, ""),
        ("pixelWidth IN {1, null}", 18, .typeMismatch, ""),
        (#"make IN ("a", "b")"#, 8, .syntax, "expected '{' to start the list after IN (lists are written in braces) at 8, found '('"),
        (#"make IN {"a" "b"}"#, 13, .syntax, "expected ',' or '}' in the list that starts at 8 at 13, found the string \"b\""),
        (#"make IN {"a",}"#, 13, .syntax, "expected a value after ',' at 13, found '}'"),
        (#"make IN {{"a"}}"#, 9, .syntax, ""),
        (#"make == {"a"}"#, 8, .typeMismatch, "expected a string for 'make' at 8, found a list"),
        (#"make == "\xff""#, 8, .invalidValue, ""),
        (#"make == "abc"#, 12, .syntax, "expected a closing '\"' for the string that starts at 8 at 12, found end of input"),
        (#"make == 'abc"#, 12, .syntax, "expected a closing \"'\" for the string that starts at 8 at 12, found end of input"),
        (#"make == "a\qb""#, 11, .syntax, ""),
        (#"make == "a\x4""#, 13, .syntax, ""),
        (#"make == "\u{110000}""#, 9, .invalidValue, ""),
        (#"make == "\u{}""#, 12, .syntax, ""),
        ("pixelWidth > 1.", 15, .syntax, "expected a digit after '.' in the number that starts at 13 at 15, found end of input"),
        ("pixelWidth > 1e", 15, .syntax, ""),
        ("pixelWidth > -", 13, .syntax, "expected a value after '>' at 13, found '-'"),
        ("pixelWidth BETWEEN 1 OR 2", 21, .syntax, "expected AND after the lower bound of BETWEEN at 21, found 'OR'"),
        ("pixelWidth BETWEEN 1 AND", 24, .syntax, "expected a value after AND at 24, found end of input"),
        (#"localDate == "2019-02-29""#, 13, .invalidValue, ""),
        (#"localDate == "2019-05-04T00:00:00""#, 13, .invalidValue, ""),
        (#"localDateTime == "2019-05-04T24:00:00""#, 17, .invalidValue, ""),
        (#"localDateTime == "2019-05-04T13:22:10.5""#, 17, .invalidValue, ""),
        (#"localDateTime == "2019-05-04 13:22:10""#, 17, .invalidValue, ""),
        (#"addedDate > "2026-11-29T12:00:00""#, 12, .invalidValue, ""),
        (#"addedDate > "2026-11-29T12:00:00+01:00""#, 12, .invalidValue, ""),
        (#"addedDate > "2026-11-29Z""#, 12, .invalidValue, ""),
        ("(isFavorite == true", 19, .syntax, "expected AND, OR or ')' to close the '(' that opens at 0 at 19, found end of input"),
        ("isFavorite == true)", 18, .syntax, "expected AND, OR or end of input at 18, found ')'"),
        ("isFavorite == true AND", 22, .syntax, "expected a key, '(' or NOT after AND at 22, found end of input"),
        ("NOT", 3, .syntax, "expected a key, '(' or NOT after NOT at 3, found end of input"),
        ("isFavorite", 10, .syntax, "expected an operator after 'isFavorite' (==, !=) at 10, found end of input"),
        (#"make == "é" AND @"#, 16, .syntax, "expected a key, '(' or NOT after AND at 16, found '@'"),
        (#"make == "😀😀" OR x"#, 16, .unknownKey, ""),
    ]

    @Test("Bad predicates: the exact position, code and message", arguments: bad)
    func badInputs(input: String, position: Int, code: AssetPredicateError.Code, message: String) {
        #expect(throws: AssetPredicateError.self) { try AssetPredicate.parse(input) }
        do {
            _ = try AssetPredicate.parse(input)
        } catch {
            #expect(error.position == position, "\(error)")
            #expect(error.code == code, "\(error)")
            if !message.isEmpty { #expect(error.message == message) }
            #expect(error.description == "expected \(error.expected) at \(error.position), found \(error.found)")
        }
    }

    @Test("Errors name what a key takes: the case-sensitive key, the subtypes, a mediaType's values")
    func messages() {
        func message(_ text: String) -> String {
            do { _ = try AssetPredicate.parse(text); return "" } catch { return error.message }
        }
        #expect(message("MediaType == \"image\"").contains("keys are case-sensitive: 'mediaType'"))
        #expect(message(#"subtypes CONTAINS "bokeh""#).contains(#""screenshot", "panorama", "live", "raw", "selfie", "highFrameRate", "timelapse", "animated", "hdr", "depthEffect""#))
        #expect(message("mediaType == null").contains("it is never null"))
        #expect(message("pixelWidth < null").contains("null only after == and !="))
        #expect(message(#"path < "/a""#).contains("(==, !=, IN, CONTAINS, BEGINSWITH)"))
        #expect(message(#"keywords == "a""#).contains("(CONTAINS, IN)"))
        #expect(message(#"localDate == "x""#).contains(#"a date "YYYY-MM-DD" for 'localDate'"#))
    }

    @Test("Limits: length, nesting depth and list size, each refused with a position, never a deep recursion")
    func limits() throws {
        // Length: 4096 bytes pass, 4097 do not (counted in bytes, reported in scalars).
        let pad = String(repeating: " ", count: PredicateLimits.maxLength - 18)
        _ = try AssetPredicate.parse("isFavorite == true" + pad)
        #expect(throws: AssetPredicateError.self) { try AssetPredicate.parse("isFavorite == true" + pad + " ") }
        do { _ = try AssetPredicate.parse("é" + String(repeating: " ", count: PredicateLimits.maxLength)) } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.position == PredicateLimits.maxLength - 1)
            #expect(error.message == "expected a predicate of at most 4096 bytes at 4095, found 4098 bytes")
        }
        do { _ = try AssetPredicate.parse(String(repeating: "(", count: 1_000_000)) } catch {
            #expect(error.code == .limitExceeded)
        }

        // Depth: 32 levels of '(' and NOT pass; the 33rd is refused where it opens.
        let d = PredicateLimits.maxDepth
        _ = try AssetPredicate.parse(String(repeating: "(", count: d) + "isFavorite == true" + String(repeating: ")", count: d))
        _ = try AssetPredicate.parse(String(repeating: "NOT ", count: d) + "isFavorite == true")
        _ = try AssetPredicate.parse(String(repeating: "NOT (", count: d / 2) + "isFavorite == true" + String(repeating: ")", count: d / 2))
        for text in [String(repeating: "(", count: 4000), String(repeating: "(", count: d + 1) + "isFavorite == true",
                     String(repeating: "NOT ", count: d + 1) + "isFavorite == true"] {
            do { _ = try AssetPredicate.parse(text) } catch {
                #expect(error.code == .limitExceeded)
                #expect(error.position == (text.hasPrefix("N") ? 4 * d : d))
                #expect(error.expected.contains("at most 32 levels"))
            }
        }

        // Lists: 1000 values pass; the 1001st is refused where it starts.
        let list = (0..<PredicateLimits.maxListCount).map(String.init).joined(separator: ",")
        let tree = try AssetPredicate.parse("pixelWidth IN {" + list + "}")
        guard case .comparison(let c) = tree, case .isIn(let values) = c.operation else { Issue.record("not IN"); return }
        #expect(values.count == 1000)
        let over = "pixelWidth IN {" + list + ",7}"
        do { _ = try AssetPredicate.parse(over); Issue.record("accepted 1001 values") } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.position == over.unicodeScalars.count - 2)
        }
    }

    @Test("Injection attempts are strings like any other")
    func injection() throws {
        for attempt in [#"'); DROP TABLE assets; --"#, #"" OR 1=1 --"#, "x' OR 'a'='a", "%", "_", #"\"#, "?1", "NULL"] {
            let quoted = AssetPredicate.comparison(PredicateComparison(key: .make, operation: .compare(.equal, .text(attempt))))
            let tree = try AssetPredicate.parse(quoted.description)
            #expect(tree == quoted)
            #expect(try AssetPredicate.parse(#"path CONTAINS "# + quoted.description.dropFirst(8)) != quoted)
        }
        // Outside quotes it is a syntax error, not SQL.
        #expect(throws: AssetPredicateError.self) { try AssetPredicate.parse(#"make == "a"); DROP TABLE assets; --"#) }
    }

    // MARK: Sort strings

    static let goodSorts: [(String, [AssetSortDescriptor])] = [
        ("", []),
        ("   ", []),
        ("localDateTime", [AssetSortDescriptor(.localDateTime)]),
        ("-localDateTime", [AssetSortDescriptor(.localDateTime, ascending: false)]),
        ("localDateTime,-pixelWidth", [AssetSortDescriptor(.localDateTime), AssetSortDescriptor(.pixelWidth, ascending: false)]),
        (" +make , -isFavorite ,path ", [AssetSortDescriptor(.make), AssetSortDescriptor(.isFavorite, ascending: false),
                                         AssetSortDescriptor(.path)]),
    ]

    @Test("Sort strings parse to descriptors and print back", arguments: goodSorts)
    func goodSort(text: String, descriptors: [AssetSortDescriptor]) throws {
        let sort = try AssetSort.parse(text)
        #expect(sort.descriptors == descriptors)
        #expect(try AssetSort.parse(sort.description) == sort)
    }

    static let badSorts: [(String, Int, AssetPredicateError.Code)] = [
        ("width", 0, .unknownKey), ("localDateTime,", 14, .syntax), (",make", 0, .syntax), ("make,,model", 5, .syntax),
        ("make model", 5, .syntax), ("make,-make", 6, .invalidValue), ("--make", 1, .syntax), ("keywords", 0, .unknownKey),
        ("make;model", 4, .syntax),
    ]

    @Test("Bad sort strings: the exact position and code", arguments: badSorts)
    func badSort(text: String, position: Int, code: AssetPredicateError.Code) {
        do { _ = try AssetSort.parse(text); Issue.record("accepted \(text)") } catch {
            #expect(error.position == position, "\(error)")
            #expect(error.code == code, "\(error)")
        }
    }

    @Test("Sort descriptors: a repeated key counts once; the unknown-key message lists the sortable keys")
    func sortDescriptors() {
        let sort = AssetSort([AssetSortDescriptor(.make), AssetSortDescriptor(.make, ascending: false)])
        #expect(sort.descriptors == [AssetSortDescriptor(.make)])
        #expect(AssetSort().isEmpty)
        do { _ = try AssetSort.parse("width") } catch {
            #expect(error.message == "expected a sort key (one of localDateTime, addedDate, pixelWidth, pixelHeight, duration, make, "
                + "model, path, mediaType, latitude, longitude, isFavorite) at 0, found 'width'")
        }
    }

    // MARK: Fuzz

    /// Checks the parser's contract on one input: a tree whose canonical text parses back to
    /// it, or an error with a position inside the text (its end included).
    static func check(_ text: String) {
        do {
            let tree = try AssetPredicate.parse(text)
            #expect(try AssetPredicate.parse(tree.description) == tree, "\(text)")
        } catch {
            #expect(error.position >= 0 && error.position <= text.unicodeScalars.count, "\(text): \(error)")
            #expect(!error.expected.isEmpty && !error.found.isEmpty)
        }
        do {
            let sort = try AssetSort.parse(text)
            #expect(try AssetSort.parse(sort.description) == sort)
        } catch {
            #expect(error.position >= 0 && error.position <= text.unicodeScalars.count, "\(text): \(error)")
        }
    }

    static let seeds = good.map(\.0) + bad.map(\.0)

    @Test("Fuzz: random strings and mutations of valid predicates parse or fail with a position inside the text")
    func fuzz() {
        var g = SplitMix64(seed: 0x5EED_F00D)
        let pieces = ["(", ")", "{", "}", ",", "\"", "'", "\\", "\\x", "\\u{", "=", "==", "!=", "<", ">=", "-", ".", "e", "1",
                      "0.5", " ", "AND", "or", "NOT", "IN", "CONTAINS", "BEGINSWITH", "BETWEEN", "true", "null", "é", "😀",
                      "\u{0}", "\n", "make", "pixelWidth", "subtypes", "localDate", "\"2019-05-04\"", "\"raw\"", "\"image\""]
        for _ in 0..<3000 {
            let n = Int.random(in: 0...24, using: &g)
            Self.check((0..<n).map { _ in pieces.randomElement(using: &g)! }.joined())
        }
        for _ in 0..<6000 {
            var s = Array(Self.seeds.randomElement(using: &g)!.unicodeScalars)
            for _ in 0..<Int.random(in: 1...4, using: &g) {
                let i = s.isEmpty ? 0 : Int.random(in: 0...s.count, using: &g)
                let piece = Array(pieces.randomElement(using: &g)!.unicodeScalars)
                switch Int.random(in: 0..<3, using: &g) {
                case 0: s.insert(contentsOf: piece, at: i)
                case 1: if i < s.count { s.remove(at: i) }
                default: if i < s.count { s.replaceSubrange(i..<min(s.count, i + piece.count), with: piece) }
                }
            }
            Self.check(String(String.UnicodeScalarView(s)))
        }
        for _ in 0..<500 {  // random bytes, as a decoder would repair them
            let bytes = (0..<Int.random(in: 0...64, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            Self.check(String(decoding: bytes, as: UTF8.self))
        }
    }
}
