import PhotoModel
import PhotoWire

/// A collection of assets or of other collections (PhotoKit's `PHAssetCollection` and
/// `PHCollectionList`), by kind. Ids tell kinds apart: `m_` moments, `y_`/`mo_` moment lists,
/// `f_` folder albums, `s_` smart albums, `u_` user albums, `uf_` user folders, `l_` folder lists.
public enum PhotoCollection: Sendable, Hashable, Identifiable {
    /// A day of photos (`moments.fetch`).
    case moment(Moment)
    /// A year or a month of moments (`momentLists.fetch`).
    case momentList(MomentList)
    /// The assets directly in one directory (`albums.fetch`).
    case folderAlbum(FolderAlbum)
    /// A rule-based album: Favorites, Videos, Recently Added, … (`smartAlbums.fetch`).
    case smartAlbum(SmartAlbum)
    /// An album the user made (`userAlbums.fetch`).
    case userAlbum(UserAlbum)
    /// A folder of user albums (`userAlbums.fetch`).
    case userFolder(UserFolder)
    /// A directory above folder albums (`collectionLists.fetch`).
    case collectionList(CollectionList)

    /// The collection's id.
    public var id: String {
        switch self {
        case .moment(let c): c.id
        case .momentList(let c): c.id
        case .folderAlbum(let c): c.id
        case .smartAlbum(let c): c.id
        case .userAlbum(let c): c.id
        case .userFolder(let c): c.id
        case .collectionList(let c): c.id
        }
    }

    /// The collection's title.
    public var title: String {
        switch self {
        case .moment(let c): c.title
        case .momentList(let c): c.title
        case .folderAlbum(let c): c.title
        case .smartAlbum(let c): c.title
        case .userAlbum(let c): c.title
        case .userFolder(let c): c.title
        case .collectionList(let c): c.title
        }
    }

    /// The assets that stand for the collection on its tile, at most three (PhotoKit's
    /// `fetchKeyAssets(in:)`): an album's or moment's favorites first, then photos spread over
    /// its time; a smart album's or list's newest. `images.request` on one gives the tile.
    public var keyAssetIDs: [String] {
        switch self {
        case .moment(let c): c.keyAssetIDs
        case .momentList(let c): c.keyAssetIDs
        case .folderAlbum(let c): c.keyAssetIDs
        case .smartAlbum(let c): c.keyAssetIDs
        case .userAlbum(let c): c.keyAssetIDs
        case .userFolder(let c): c.keyAssetIDs
        case .collectionList(let c): c.keyAssetIDs
        }
    }

    /// One calendar day of captures (PhotoKit's moment).
    public struct Moment: Sendable, Hashable, Identifiable {
        /// `m_YYYYMMDD`.
        public var id: String
        /// The day, `YYYY-MM-DD`.
        public var localDate: String
        /// A human title for the day: where its photos were taken (`placeTitle`) when any has a
        /// place, else its date (`dateTitle`).
        public var title: String
        /// "Lisbon", "Lisbon & Sintra", "Portugal" (the wire's `title`); nil without places.
        public var placeTitle: String?
        /// "Saturday, 4 May 2019".
        public var dateTitle: String
        /// Its assets' cities, most assets first.
        public var locationNames: [String]
        /// The first capture time.
        public var startDate: LocalDateTime
        /// The last capture time.
        public var endDate: LocalDateTime
        /// Photos and videos.
        public var assetCount: Int
        /// Photos.
        public var photoCount: Int
        /// Videos.
        public var videoCount: Int
        /// The middle of the day's located photos, when any has a location.
        public var latitude: Double?
        /// See ``latitude``.
        public var longitude: Double?
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `moments.fetch` record.
        public init(json: JSONValue, path: String = "moment") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            localDate = try f.string("localDate")
            // A photod before places sent the date as `title` and no `dateTitle`.
            let dated = try f.optionalString("dateTitle")
            placeTitle = dated == nil ? nil : try f.optionalString("title")
            if let dated { dateTitle = dated } else { dateTitle = try f.string("title") }
            title = placeTitle ?? dateTitle
            locationNames = try f.optionalStrings("locationNames")
            startDate = try f.localDateTime("startDate")
            endDate = try f.localDateTime("endDate")
            assetCount = try f.count("assetCount")
            photoCount = try f.count("photoCount")
            videoCount = try f.count("videoCount")
            latitude = try f.optionalDouble("latitude")
            longitude = try f.optionalDouble("longitude")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// The moments of a year or a month.
    public struct MomentList: Sendable, Hashable, Identifiable {
        /// `y_YYYY` or `mo_YYYY-MM`.
        public var id: String
        /// `"year"` or `"month"`.
        public var kind: String
        /// A human title.
        public var title: String
        /// The year.
        public var year: Int
        /// The month (1–12) of a month list.
        public var month: Int?
        /// The first capture time.
        public var startDate: LocalDateTime
        /// The last capture time.
        public var endDate: LocalDateTime
        /// Photos and videos.
        public var assetCount: Int
        /// Photos.
        public var photoCount: Int
        /// Videos.
        public var videoCount: Int
        /// The moments, newest first.
        public var momentIDs: [String]
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `momentLists.fetch` record.
        public init(json: JSONValue, path: String = "momentList") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            kind = try f.string("kind")
            title = try f.string("title")
            year = Int(try f.int("year"))
            month = try f.optionalInt("month").map { Int($0) }
            startDate = try f.localDateTime("startDate")
            endDate = try f.localDateTime("endDate")
            assetCount = try f.count("assetCount")
            photoCount = try f.count("photoCount")
            videoCount = try f.count("videoCount")
            momentIDs = try f.strings("momentIDs")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// The assets directly in one directory.
    public struct FolderAlbum: Sendable, Hashable, Identifiable {
        /// `f_…`.
        public var id: String
        /// The directory's name.
        public var title: String
        /// The directory.
        public var path: PathBytes
        /// Visible assets in it.
        public var assetCount: Int
        /// The first capture time, when it has assets.
        public var startDate: LocalDateTime?
        /// The last capture time, when it has assets.
        public var endDate: LocalDateTime?
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes an `albums.fetch` record.
        public init(json: JSONValue, path: String = "album") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            title = try f.string("title")
            self.path = try f.path("path")
            assetCount = try f.count("assetCount")
            startDate = try f.optionalLocalDateTime("startDate")
            endDate = try f.optionalLocalDateTime("endDate")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// A rule-based album.
    public struct SmartAlbum: Sendable, Hashable, Identifiable {
        /// `s_favorites`, `s_videos`, ….
        public var id: String
        /// `"Favorites"`.
        public var title: String
        /// PhotoKit's subtype name (`"smartAlbumFavorites"`).
        public var subtype: String
        /// Assets in it now.
        public var assetCount: Int
        /// The rule, in words.
        public var rule: String
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `smartAlbums.fetch` record.
        public init(json: JSONValue, path: String = "smartAlbum") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            title = try f.string("title")
            subtype = try f.string("subtype")
            assetCount = try f.count("assetCount")
            rule = try f.optionalString("rule") ?? ""
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// An album the user made; its assets are in the user's order.
    public struct UserAlbum: Sendable, Hashable, Identifiable {
        /// `u_…`.
        public var id: String
        /// The user's title.
        public var title: String
        /// The user folder holding it, if any.
        public var folderID: String?
        /// Assets in it.
        public var assetCount: Int
        /// When it was made, in Unix milliseconds.
        public var createdAt: Int64
        /// When it last changed, in Unix milliseconds.
        public var updatedAt: Int64
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `userAlbums.fetch` album.
        public init(json: JSONValue, path: String = "album") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            title = try f.string("title")
            folderID = try f.optionalString("folderID")
            assetCount = try f.count("assetCount")
            createdAt = try f.utcMilliseconds("createdDate")
            updatedAt = try f.utcMilliseconds("updatedDate")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// A folder of user albums and folders.
    public struct UserFolder: Sendable, Hashable, Identifiable {
        /// `uf_…`.
        public var id: String
        /// The user's title.
        public var title: String
        /// The folder holding it, if any.
        public var parentID: String?
        /// When it was made, in Unix milliseconds.
        public var createdAt: Int64
        /// When it last changed, in Unix milliseconds.
        public var updatedAt: Int64
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `userAlbums.fetch` folder.
        public init(json: JSONValue, path: String = "folder") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            title = try f.string("title")
            parentID = try f.optionalString("parentID")
            createdAt = try f.utcMilliseconds("createdDate")
            updatedAt = try f.utcMilliseconds("updatedDate")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }

    /// A directory above folder albums: the library's folder tree.
    public struct CollectionList: Sendable, Hashable, Identifiable {
        /// `l_…`.
        public var id: String
        /// The directory's name.
        public var title: String
        /// The directory.
        public var path: PathBytes
        /// The list above it, nil for a library root.
        public var parentID: String?
        /// The lists directly below it.
        public var listIDs: [String]
        /// The folder albums directly below it.
        public var albumIDs: [String]
        /// Folder albums anywhere below it.
        public var albumCount: Int
        /// Assets anywhere below it.
        public var assetCount: Int
        /// The assets that stand for it (see `PhotoCollection.keyAssetIDs`).
        public var keyAssetIDs: [String]

        /// Decodes a `collectionLists.fetch` record.
        public init(json: JSONValue, path: String = "list") throws(MalformedReply) {
            let f = try Fields(json, at: path)
            id = try f.string("id")
            title = try f.string("title")
            self.path = try f.path("path")
            parentID = try f.optionalString("parentID")
            listIDs = try f.strings("listIDs")
            albumIDs = try f.strings("albumIDs")
            albumCount = try f.count("albumCount")
            assetCount = try f.count("assetCount")
            keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        }
    }
}

/// A country, region or city where photos were taken (`places.fetch`, PROTOCOL.md): `id`
/// (`pl_…`) lists its assets through `collections.assets`.
public struct PlaceCollection: Sendable, Hashable, Identifiable {
    public var id: String
    /// `"country"`, `"region"` or `"city"`.
    public var kind: String
    public var title: String
    /// ISO 3166-1 alpha-2, when known.
    public var countryCode: String?
    public var assetCount: Int
    public var startDate: LocalDateTime
    public var endDate: LocalDateTime
    public var keyAssetIDs: [String]
    /// The regions and cities below it.
    public var places: [PlaceCollection]

    /// Decodes a `places.fetch` record.
    public init(json: JSONValue, path: String = "place") throws(MalformedReply) {
        let f = try Fields(json, at: path)
        id = try f.string("id")
        kind = try f.string("kind")
        title = try f.string("title")
        countryCode = try f.optionalString("countryCode")
        assetCount = try f.count("assetCount")
        startDate = try f.localDateTime("startDate")
        endDate = try f.localDateTime("endDate")
        keyAssetIDs = try f.optionalStrings("keyAssetIDs")
        places = kind == "city" ? [] : try f.objects("places") { v, p throws(MalformedReply) in try PlaceCollection(json: v, path: p) }
    }
}

/// What `PhotoLibrary.searchCollections` found, in photod's order.
public struct CollectionSearch: Sendable, Hashable {
    public var places: [PlaceCollection]
    public var collections: [PhotoCollection]
    public var token: Int64
}
