import PhotoClient
import PhotoModel
import PhotoWire
import Testing

/// Records in the shapes photod writes them (`WireMapping`: `assets.fetch`, the collection
/// fetches, `changes` notifications); the end-to-end tests decode the real daemon's.
enum Samples {
    static let asset = #"""
    {"id":"a_3ocnwoznuaa7slhsdfeq","path":"/srv/photos/2021/a/p1.jpg","mediaType":"image","format":"jpeg","subtypes":["panorama","selfie"],"localDateTime":"2021-06-02T09:00:00","utcOffset":"+02:00","dateSource":"exifOriginal","pixelWidth":101,"pixelHeight":480,"orientation":1,"latitude":48.8584,"longitude":2.2945,"altitude":35.5,"make":"Canon","model":"EOS 5D","lensModel":null,"duration":null,"rating":null,"keywords":["paris","tower"],"isFavorite":true,"isHidden":false,"isAvailable":true,"fileSize":1843,"addedDate":"2026-11-29T12:45:04.123Z","resources":[{"path":"/srv/photos/2021/a/p1.jpg","role":"primary"},{"path":"/srv/photos/2021/a/p1.xmp","role":"sidecar"}]}
    """#

    static let video = #"""
    {"id":"a_v1","path":"/srv/photos/caf\u00e9.mp4","pathBytes":"L2xpYi9jYWbpLmpwZw==","mediaType":"video","format":"mp4","subtypes":[],"localDateTime":"2020-01-05T18:30:00.250","utcOffset":null,"dateSource":"quicktime","pixelWidth":null,"pixelHeight":null,"orientation":1,"latitude":null,"longitude":null,"altitude":null,"make":null,"model":null,"lensModel":null,"duration":12.5,"rating":3,"keywords":[],"isFavorite":false,"isHidden":true,"isAvailable":false,"fileSize":99,"addedDate":"1970-01-01T00:00:01.000Z","resources":[],"someFutureField":{"x":1}}
    """#

    static let changeSet = #"""
    {"token":4811,"time":"2026-11-29T12:45:04.123Z","assets":{"inserted":["a_1"],"updated":["a_2","a_3"],"deleted":[]},"collections":{"inserted":[],"updated":["m_20210602","s_favorites"],"deleted":["u_x"]}}
    """#

    static let moment = #"""
    {"id":"m_20210602","localDate":"2021-06-02","title":"Wednesday, June 2, 2021","startDate":"2021-06-02T09:00:00","endDate":"2021-06-02T17:10:00.500","assetCount":3,"photoCount":2,"videoCount":1,"latitude":null,"longitude":null}
    """#

    static let folderAlbum = #"""
    {"id":"f_abc","title":"a","kind":"folder","path":"/srv/photos/2021/a","assetCount":2,"startDate":"2021-06-01T09:00:00","endDate":null}
    """#

    static let smartAlbum = #"""
    {"id":"s_favorites","title":"Favorites","subtype":"smartAlbumFavorites","assetCount":1,"rule":"Every visible asset marked favorite."}
    """#

    static let userAlbum = #"""
    {"id":"u_k2","title":"Trip","folderID":null,"assetCount":0,"createdDate":"2026-01-01T00:00:00.000Z","updatedDate":"2026-01-02T00:00:00.000Z"}
    """#

    static let userFolder = #"""
    {"id":"uf_k3","title":"Travel","parentID":"uf_k1","createdDate":"2026-01-01T00:00:00.000Z","updatedDate":"2026-01-01T00:00:00.000Z"}
    """#

    static let collectionList = #"""
    {"id":"l_1","title":"photos","path":"/srv/photos","parentID":null,"listIDs":["l_2"],"albumIDs":["f_abc"],"albumCount":2,"assetCount":5}
    """#

    static let momentList = #"""
    {"id":"mo_2021-06","kind":"month","title":"June 2021","year":2021,"month":6,"startDate":"2021-06-01T09:00:00","endDate":"2021-06-02T17:10:00","assetCount":4,"photoCount":4,"videoCount":0,"momentCount":2,"momentIDs":["m_20210602","m_20210601"]}
    """#

    static func json(_ text: String) throws -> JSONValue { try JSONValue.parse(text) }

    /// `text` with member `key` replaced by `value` (raw JSON), or removed when nil.
    static func edited(_ text: String, _ key: String, _ value: String?) throws -> JSONValue {
        guard case .object(var o) = try json(text) else { throw MalformedReply(path: "", expected: "object", found: "other") }
        if let value { o[key] = try json(value) } else { o.removeAll(key) }
        return .object(o)
    }
}

@Suite("Decoding photod's records")
struct DecodingTests {
    @Test("An asset record: every field, dates, location, resources")
    func asset() throws {
        let a = try PhotoAsset(json: Samples.json(Samples.asset))
        #expect(a.id == "a_3ocnwoznuaa7slhsdfeq")
        #expect(a.path == PathBytes("/srv/photos/2021/a/p1.jpg"))
        #expect(a.mediaType == .image)
        #expect(a.subtypes == [.panorama, .selfie])
        #expect(a.localDateTime == LocalDateTime(year: 2021, month: 6, day: 2, hour: 9))
        #expect(a.utcOffset == UTCOffset(seconds: 7200))
        #expect(a.pixelWidth == 101 && a.pixelHeight == 480)
        #expect(a.location?.latitude == 48.8584 && a.location?.longitude == 2.2945 && a.location?.altitude == 35.5)
        #expect(a.make == "Canon" && a.lensModel == nil)
        #expect(a.keywords == ["paris", "tower"])
        #expect(a.isFavorite && !a.isHidden && a.isAvailable)
        #expect(a.addedAt == 1_795_956_304_123)
        #expect(a.resources.map(\.role) == ["primary", "sidecar"])
    }

    @Test("A video with nulls, a non-UTF-8 path (pathBytes), and members this client does not know")
    func video() throws {
        let v = try PhotoAsset(json: Samples.json(Samples.video))
        #expect(v.mediaType == .video)
        #expect(v.path.bytes == Array("/lib/caf".utf8) + [0xE9] + Array(".jpg".utf8))
        #expect(v.localDateTime.millisecond == 250)
        #expect(v.utcOffset == nil && v.location == nil && v.pixelWidth == nil)
        #expect(v.duration == 12.5 && v.rating == 3)
        #expect(v.isHidden && !v.isAvailable)
        #expect(v.addedAt == 1000)
    }

    @Test("Malformed asset records name the member and what was wrong", arguments: [
        ("id", nil, "'asset.id' must be a string (got nothing)"),
        ("id", "null", "'asset.id' must be a string (got null)"),
        ("pixelWidth", "\"wide\"", "'asset.pixelWidth' must be an integer or null (got string)"),
        ("localDateTime", "\"yesterday\"", "'asset.localDateTime' must be a date-time YYYY-MM-DDTHH:MM:SS[.mmm] (got \"yesterday\")"),
        ("isFavorite", "1", "'asset.isFavorite' must be true or false (got integer)"),
        ("keywords", "[\"a\", 2]", "'asset.keywords[1]' must be a string (got integer)"),
        ("resources", "[{\"path\": \"/x\"}]", "'asset.resources[0].role' must be a string (got nothing)"),
        ("pathBytes", "\"@@@\"", "'asset.pathBytes' must be base64 (got \"@@@\")"),
        ("addedDate", "\"2026-11-29T12:45:04\"", "'asset.addedDate' must be a UTC time YYYY-MM-DDTHH:MM:SS.mmmZ (got \"2026-11-29T12:45:04\")"),
        ("utcOffset", "\"soon\"", "'asset.utcOffset' must be a UTC offset like +02:00 (got \"soon\")"),
    ] as [(String, String?, String)])
    func malformedAsset(key: String, value: String?, message: String) throws {
        let json = try Samples.edited(Samples.asset, key, value)
        #expect(throws: MalformedReply.self) { try PhotoAsset(json: json) }
        do {
            _ = try PhotoAsset(json: json)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("Not an object at all")
    func notAnObject() {
        #expect(throws: MalformedReply(path: "assets[2]", expected: "an object", found: "array")) {
            try PhotoAsset(json: .array([]), path: "assets[2]")
        }
    }

    @Test("A change set, and malformed ones")
    func changeSet() throws {
        let c = try ChangeSet(json: Samples.json(Samples.changeSet))
        #expect(c.token == 4811)
        #expect(c.time == 1_795_956_304_123)
        #expect(c.assetsInserted == ["a_1"] && c.assetsUpdated == ["a_2", "a_3"] && c.assetsDeleted.isEmpty)
        #expect(c.collectionsUpdated == ["m_20210602", "s_favorites"] && c.collectionsDeleted == ["u_x"])
        #expect(throws: MalformedReply(path: "change.token", expected: "an integer", found: "string")) {
            try ChangeSet(json: Samples.edited(Samples.changeSet, "token", "\"4811\""))
        }
        #expect(throws: MalformedReply(path: "change.assets", expected: "an object", found: "nothing")) {
            try ChangeSet(json: Samples.edited(Samples.changeSet, "assets", nil))
        }
        #expect(throws: MalformedReply(path: "change.collections.deleted", expected: "an array", found: "nothing")) {
            try ChangeSet(json: Samples.edited(Samples.changeSet, "collections", #"{"inserted":[],"updated":[]}"#))
        }
    }

    @Test("Collections of every kind")
    func collections() throws {
        let m = try PhotoCollection.Moment(json: Samples.json(Samples.moment))
        #expect(m.id == "m_20210602" && m.assetCount == 3 && m.videoCount == 1 && m.latitude == nil)
        #expect(m.endDate.millisecond == 500)
        let f = try PhotoCollection.FolderAlbum(json: Samples.json(Samples.folderAlbum))
        #expect(f.path == PathBytes("/srv/photos/2021/a") && f.startDate != nil && f.endDate == nil)
        let s = try PhotoCollection.SmartAlbum(json: Samples.json(Samples.smartAlbum))
        #expect(s.subtype == "smartAlbumFavorites" && s.assetCount == 1)
        let u = try PhotoCollection.UserAlbum(json: Samples.json(Samples.userAlbum))
        #expect(u.folderID == nil && u.createdAt == 1_767_225_600_000)
        let uf = try PhotoCollection.UserFolder(json: Samples.json(Samples.userFolder))
        #expect(uf.parentID == "uf_k1")
        let l = try PhotoCollection.CollectionList(json: Samples.json(Samples.collectionList))
        #expect(l.listIDs == ["l_2"] && l.albumCount == 2)
        let ml = try PhotoCollection.MomentList(json: Samples.json(Samples.momentList))
        #expect(ml.month == 6 && ml.momentIDs.count == 2)
        #expect(PhotoCollection.moment(m).id == m.id && PhotoCollection.userAlbum(u).title == "Trip")

        #expect(throws: MalformedReply(path: "moment.assetCount", expected: "a count (≥ 0)", found: "-1")) {
            try PhotoCollection.Moment(json: Samples.edited(Samples.moment, "assetCount", "-1"))
        }
        #expect(throws: MalformedReply(path: "album.createdDate", expected: "a string", found: "integer")) {
            try PhotoCollection.UserAlbum(json: Samples.edited(Samples.userAlbum, "createdDate", "0"))
        }
    }

    @Test("A client error for a malformed reply names the method")
    func clientError() {
        let e = ClientError.malformedReply(method: "assets.fetch",
                                           MalformedReply(path: "assets[0].id", expected: "a string", found: "null"))
        #expect(e.description == "photod's answer to assets.fetch is malformed: 'assets[0].id' must be a string (got null)")
    }
}
