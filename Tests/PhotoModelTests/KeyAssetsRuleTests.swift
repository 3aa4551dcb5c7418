import PhotoModel
import Testing

@Suite("Key assets: the rules")
struct KeyAssetsRuleTests {
    static func member(_ name: String, _ time: String, video: Bool = false, favorite: Bool = false) -> KeyAssets.Candidate {
        KeyAssets.Candidate(key: MomentMemberKey(local: LocalDateTime(iso: "2019-05-04T" + time)!, path: PathBytes("/lib/" + name),
                                                 id: id(name)),
                            mediaType: video ? .video : .image, isFavorite: favorite)
    }

    /// A name's id (the name is what the expectations read).
    static func id(_ name: String) -> AssetID { AssetID(milliseconds: 1, noise: FolderTree.fnv1a64(Array(name.utf8))) }

    static func names(_ ids: [AssetID]) -> [String] {
        let known = ["a", "b", "p", "v", "v1", "v2", "v3"] + (0..<24).flatMap { ["h\($0)", "z\($0)", "n\($0)"] }
        let byID = Dictionary(uniqueKeysWithValues: known.map { (id($0), $0) })
        return ids.map { byID[$0] ?? $0.rawValue }
    }

    static func spread(_ members: [KeyAssets.Candidate]) -> [String] {
        let times = members.map(\.key.local).sorted { MomentGrouping.precedes($0, $1) }
        return names(KeyAssets.spread(members.shuffled(), start: times.first!, end: times.last!))
    }

    @Test("The slots' times are the middles of equal parts of the span, in whole seconds")
    func targets() {
        let start = LocalDateTime(iso: "2019-05-04T10:00:00")!, end = LocalDateTime(iso: "2019-05-04T16:00:00.750")!
        #expect(KeyAssets.targets(start: start, end: end, count: 3).map(\.description)
                    == ["2019-05-04T11:00:00", "2019-05-04T13:00:00", "2019-05-04T15:00:00"])
        #expect(KeyAssets.targets(start: start, end: end, count: 2).map(\.description) == ["2019-05-04T11:30:00", "2019-05-04T14:30:00"])
        #expect(KeyAssets.targets(start: start, end: start, count: 3).map(\.description) == Array(repeating: "2019-05-04T10:00:00", count: 3))
        // Across midnight (a user album spans days).
        #expect(KeyAssets.targets(start: LocalDateTime(iso: "2019-05-04T23:00:00")!, end: LocalDateTime(iso: "2019-05-05T01:00:00")!,
                                  count: 1).map(\.description) == ["2019-05-05T00:00:00"])
    }

    @Test("Photos spread over the span: the first at or after each slot's time, else the last before it")
    func spreadsPhotos() {
        let hourly = (8...17).map { Self.member("h\($0)", ($0 < 10 ? "0" : "") + "\($0):00:00") }
        // 08:00–17:00: the slots are at 09:30, 12:30 and 15:30.
        #expect(Self.spread(hourly) == ["h10", "h13", "h16"])
        // Crowded at the end: each slot takes the next photo not taken yet.
        let crowd = [Self.member("a", "08:00:00")] + (0..<5).map { Self.member("z\($0)", "17:00:0\($0)") }
        #expect(Self.spread(crowd) == ["z0", "z1", "z2"])
        // None after a slot's time: the last before it.
        let early = [Self.member("a", "08:00:00"), Self.member("b", "08:00:01"), Self.member("v", "17:00:00", video: true)]
        #expect(Self.spread(early) == ["a", "b", "v"])
        // Fewer than three: all of them, in capture order.
        #expect(Self.spread([Self.member("b", "11:00:00"), Self.member("a", "09:00:00")]) == ["a", "b"])
    }

    @Test("Favorites come first, in capture order; the slots left spread over the rest")
    func favoritesFirst() {
        var day = (8...16).map { Self.member("h\($0)", ($0 < 10 ? "0" : "") + "\($0):00:00") }
        day[8].isFavorite = true  // 16:00
        day[1].isFavorite = true  // 09:00
        // Two favorites, one slot: the middle of 08:00–16:00.
        #expect(Self.spread(day) == ["h9", "h16", "h12"])
        for k in day.indices { day[k].isFavorite = k % 2 == 0 }
        #expect(Self.spread(day) == ["h8", "h10", "h12"])
    }

    @Test("Videos fill the slots only when the photos run out")
    func videosLast() {
        let day = [Self.member("v1", "08:00:00", video: true), Self.member("p", "12:00:00"), Self.member("v2", "16:00:00", video: true),
                   Self.member("v3", "10:00:00", video: true)]
        // The photo first; two slots for videos at 10:00 and 14:00.
        #expect(Self.spread(day) == ["v3", "p", "v2"])
        #expect(Self.spread([Self.member("v", "08:00:00", video: true)]) == ["v"])
    }

    @Test("The newest: the last three in capture order, newest first; merging keeps the newest three once each")
    func newest() {
        let keys = ["10:00:00", "09:00:00", "10:00:00.500", "11:00:00"].enumerated().map { Self.member("n\($0.offset)", $0.element).key }
        #expect(Self.names(KeyAssets.newest(keys).map(\.id)) == ["n3", "n2", "n0"])
        var merged = KeyAssets.newest(Array(keys.prefix(2)))
        KeyAssets.merge(KeyAssets.newest(Array(keys.suffix(2))), into: &merged)
        KeyAssets.merge([keys[3]], into: &merged)
        #expect(Self.names(merged.map(\.id)) == ["n3", "n2", "n0"])
    }
}
