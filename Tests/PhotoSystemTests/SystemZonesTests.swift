import Foundation
import PhotoModel
import PhotoSystem
import PhotoTesting
import Testing

/// Time zones read from the system's database (`SystemZones`, `TZifZone`, `POSIXZoneRule`),
/// against Python's `zoneinfo`, which reads the same files with an implementation of its own.
@Suite struct SystemZonesTests {
    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Every zone the database has, at instants from 1850 to 2150 (every 41 days and 5 hours,
    /// so every hour of the day and month of the year come up), and a second
    /// before and after each instant Python sees the offset change at: photod's offset is
    /// Python's, to the second.
    @Test(.enabled(if: python != nil, "needs python3 (its zoneinfo module is the reference)"))
    func everyZoneAgreesWithPython() throws {
        let script = """
            import zoneinfo, datetime, sys
            E = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
            ts = list(range(-3786825600, 5680281600, 41 * 86400 + 5 * 3600))
            for name in sorted(zoneinfo.available_timezones()):
                try:
                    z = zoneinfo.ZoneInfo(name)
                except Exception:
                    continue
                def off(t):
                    return int((E + datetime.timedelta(seconds=t)).astimezone(z).utcoffset().total_seconds())
                out, prev = [], None
                for t in ts:
                    o = off(t)
                    if prev is not None and o != prev[1]:
                        # Find the change to the second between the two instants.
                        lo, hi = prev[0], t
                        while hi - lo > 1:
                            mid = (lo + hi) // 2
                            if off(mid) == prev[1]: lo = mid
                            else: hi = mid
                        out.append("%d:%d" % (lo, prev[1])); out.append("%d:%d" % (hi, off(hi)))
                    out.append("%d:%d" % (t, o)); prev = (t, o)
                print(name, " ".join(out))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.python))
        process.arguments = ["-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var zones = 0, checked = 0, wrong: [String] = []
        // Lines of `name t:offset t:offset ...`, parsed as bytes (millions of numbers).
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard let first = fields.first else { continue }
            let name = String(decoding: first, as: UTF8.self)
            guard let zone = SystemZones.zone(named: name) else {
                wrong.append("\(name): not found")
                continue
            }
            zones += 1
            for pair in fields.dropFirst() {
                var numbers: [Int64] = [0, 0], k = 0, sign: Int64 = 1
                for c in pair {
                    switch c {
                    case UInt8(ascii: ":"): numbers[k] *= sign; k = 1; sign = 1
                    case UInt8(ascii: "-"): sign = -1
                    default: numbers[k] = numbers[k] * 10 + Int64(c - 48)
                    }
                }
                numbers[1] *= sign
                checked += 1
                let got = zone.offsetSeconds(atUnixSeconds: numbers[0])
                if got != Int(numbers[1]), wrong.count < 20 { wrong.append("\(name) at \(numbers[0]): \(got), Python \(numbers[1])") }
            }
        }
        #expect(zones > 300 && checked > 500_000, "\(zones) zones, \(checked) instants")
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }

    @Test("POSIX rules: both hemispheres, negative daylight saving, all-year daylight, angle-bracket names, times past 24 h")
    func posixRules() throws {
        func offset(_ rule: String, _ iso: String) throws -> Int {
            let zone = try #require(TZifZone(identifier: rule, posix: rule))
            let local = try #require(LocalDateTime(iso: iso))
            return zone.offsetSeconds(atUnixSeconds: local.unixSeconds(offsetSeconds: 0))
        }
        let berlin = "CET-1CEST,M3.5.0,M10.5.0/3"
        #expect(try offset(berlin, "2024-01-15T12:00:00") == 3600)
        #expect(try offset(berlin, "2024-07-15T12:00:00") == 7200)
        #expect(try offset(berlin, "2024-03-31T00:59:59") == 3600)   // the change at 01:00 UTC
        #expect(try offset(berlin, "2024-03-31T01:00:00") == 7200)
        #expect(try offset(berlin, "2024-10-27T00:59:59") == 7200)
        #expect(try offset(berlin, "2024-10-27T01:00:00") == 3600)
        let sydney = "AEST-10AEDT,M10.1.0,M4.1.0/3"
        #expect(try offset(sydney, "2024-01-15T00:00:00") == 39600)
        #expect(try offset(sydney, "2024-07-15T00:00:00") == 36000)
        let dublin = "IST-1GMT0,M10.5.0,M3.5.0/1"   // winter is the "daylight" time, an hour behind
        #expect(try offset(dublin, "2024-01-15T12:00:00") == 0)
        #expect(try offset(dublin, "2024-07-15T12:00:00") == 3600)
        #expect(try offset("<+0330>-3:30", "2024-07-15T12:00:00") == 12600)
        #expect(try offset("<-03>3", "2024-07-15T12:00:00") == -10800)
        let allYear = "EST5EDT,0/0,J365/25"
        for day in ["2024-01-01T06:00:00", "2024-06-01T00:00:00", "2024-12-31T23:00:00", "2025-01-01T05:30:00"] {
            #expect(try offset(allYear, day) == -14400, "\(day)")
        }
        let nuuk = "<-02>2<-01>,M3.5.0/-1,M10.5.0/0"
        #expect(try offset(nuuk, "2024-07-01T00:00:00") == -3600)
        #expect(try offset(nuuk, "2024-01-01T00:00:00") == -7200)
        for bad in ["", "C", "CET", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.5.0", "CET-1CEST,M3.5.0,M10.5.0/3x", "<CET-1"] {
            #expect(TZifZone(identifier: bad, posix: bad) == nil || bad == "CET", "\(bad)")
        }
    }

    @Test func namesAndFiles() throws {
        #expect(SystemZones.zone(named: "Europe/Berlin")?.identifier == "Europe/Berlin")
        #expect(SystemZones.zone(named: "../../etc/passwd") == nil)
        #expect(SystemZones.zone(named: "/etc/localtime") == nil)
        #expect(SystemZones.zone(named: "No/Such_Zone") == nil)
        #expect(TZifZone(identifier: "x", tzif: Array("TZif2 but not really".utf8)) == nil)
        // A link into the database names its zone, as /etc/localtime does.
        let dir = try TemporaryDirectory("zones")
        defer { dir.remove() }
        let link = dir("localtime").string
        #expect(symlink("/usr/share/zoneinfo/Asia/Tokyo", link) == 0)
        #expect(SystemZones.identifier(ofLink: link) == "Asia/Tokyo")
    }
}

