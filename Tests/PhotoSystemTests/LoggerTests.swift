import PhotoSystem
import Testing

@Suite struct LoggerTests {
    @Test(arguments: [
        (nil, DebugFacilities.none),
        ("", DebugFacilities.none),
        ("watch", DebugFacilities(names: ["watch"])),
        ("watch,pipeline,store,wire", DebugFacilities(names: ["watch", "pipeline", "store", "wire"])),
        (" Watch , PIPELINE,,", DebugFacilities(names: ["watch", "pipeline"])),
        ("all", DebugFacilities(all: true)),
        ("wire,ALL", DebugFacilities(all: true, names: ["wire"])),
        ("*", DebugFacilities(all: true)),
    ] as [(String?, DebugFacilities)])
    func parsesPhotodDebug(text: String?, expected: DebugFacilities) {
        #expect(DebugFacilities.parse(text) == expected)
    }

    @Test func debugFacilitiesCoverTheirDottedChildren() {
        let debug = DebugFacilities.parse("pipeline,wire.rpc")
        #expect(debug.contains("pipeline"))
        #expect(debug.contains("pipeline.sort"))
        #expect(debug.contains("Pipeline.Sort"))
        #expect(debug.contains("wire.rpc"))
        #expect(!debug.contains("wire"))
        #expect(!debug.contains("pipelines"))
        #expect(!debug.contains("store"))
        #expect(DebugFacilities.parse("all").contains("anything"))
        #expect(!DebugFacilities.none.contains("pipeline"))
    }

    @Test func facilitiesNamedInPhotodDebugLogAtDebug() {
        let sink = MemorySink()
        let root = Logger(facility: "photod", threshold: .warning, sink: sink, debug: .parse("pipeline,watch"))
        #expect(root.threshold == .warning)
        let pipeline = root.facility("pipeline")
        let live = root.facility("live")
        let watch = live.facility("watch")
        let store = pipeline.facility("store")  // derived from a debug logger, but not named: the root's level
        #expect(pipeline.threshold == .debug)
        #expect(live.threshold == .warning)
        #expect(watch.threshold == .debug)
        #expect(store.threshold == .warning)
        #expect(root.facility("pipeline", threshold: .error).threshold == .error)  // explicit wins

        pipeline.debug("p")
        store.debug("s")
        store.warning("s!")
        watch.info("w")
        live.info("l")
        #expect(sink.all.map(\.message) == ["p", "s!", "w"])
        #expect(sink.all.map(\.facility) == ["pipeline", "store", "watch"])
    }

    @Test func theRootItselfCanBeSwitched() {
        #expect(Logger(facility: "photod", threshold: .info, sink: MemorySink(), debug: .parse("photod")).threshold == .debug)
        let all = Logger(facility: "photod", threshold: .error, sink: MemorySink(), debug: .parse("all"))
        #expect(all.threshold == .debug)
        #expect(all.facility("anything").threshold == .debug)
    }

    @Test func disabledRecordsCostNothing() {
        let evaluated = Locked(0)
        func expensive() -> String {
            evaluated.withLock { $0 += 1 }
            return "x"
        }
        let logger = Logger(facility: "f", threshold: .info, sink: MemorySink())
        logger.debug(expensive(), [("k", expensive())])
        #expect(evaluated.withLock { $0 } == 0)
        #expect(!logger.isEnabled(.debug))
        #expect(logger.isEnabled(.info))
        logger.info(expensive(), [("k", expensive())])
        #expect(evaluated.withLock { $0 } == 2)
    }

    @Test func recordsCarryTheirSource() throws {
        let sink = MemorySink()
        let line = #line + 1
        Logger(facility: "f", sink: sink).notice("n", [("a", "1")])
        let record = try #require(sink.all.first)
        #expect(record.file == "PhotoSystemTests/LoggerTests.swift")
        #expect(record.line == line)
        #expect(record.function == "recordsCarryTheirSource()")
        #expect(record.level == .notice)
        #expect(record.metadata.map { [$0.0, $0.1] } == [["a", "1"]])
    }

    @Test func aLoggerIsSmall() {
        // A string, a level and one reference to the shared root.
        #expect(MemoryLayout<Logger>.size <= 32)
    }
}
