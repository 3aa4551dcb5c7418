import PhotoModel
import PhotoPipeline
import PhotoStore
import PhotoWire

/// The one place where domain values become wire values (`PhotoWire` knows no domain types).
enum WireMapping {
    /// A path as the wire carries it: the UTF-8 string, plus `pathBytes` (base64 of the raw
    /// bytes) when the name is not valid UTF-8, so that such files still work.
    static func addPath(_ path: PathBytes, key: String = "path", to object: inout JSONObject) {
        object[key] = .string(path.string)
        if !path.isValidUTF8 { object[key + "Bytes"] = .string(Base64.encode(path.bytes)) }
    }

    /// The asset record: the pinned field names of `assets.fetch` and `photoctl assets --json`.
    /// `offline`: roots reported unavailable (their assets' files cannot be opened now).
    static func asset(_ a: Asset, offline: [PathBytes]) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(a.id.rawValue)
        addPath(a.path, to: &o)
        o["mediaType"] = .string(a.mediaType.rawValue)
        o["format"] = .string(a.format)
        o["subtypes"] = .array(a.subtypes.map(\.rawValue).sorted().map { .string($0) })
        o["localDateTime"] = .string(a.captureDate.local.description)
        o["utcOffset"] = (a.captureDate.offset ?? a.zoneOffset).map { .string($0.description) } ?? .null
        o["utcOffsetSource"] = a.captureDate.offset != nil ? .string("metadata") : a.zoneOffset != nil ? .string("place") : .null
        o["dateSource"] = .string(a.captureDate.source.rawValue)
        o["pixelWidth"] = a.pixelWidth.map { .int(Int64($0)) } ?? .null
        o["pixelHeight"] = a.pixelHeight.map { .int(Int64($0)) } ?? .null
        o["orientation"] = .int(Int64(a.orientation))
        o["latitude"] = a.latitude.map { .double($0) } ?? .null
        o["longitude"] = a.longitude.map { .double($0) } ?? .null
        o["altitude"] = a.altitude.map { .double($0) } ?? .null
        o["place"] = a.place.map(place) ?? .null
        o["make"] = a.make.map { .string($0) } ?? .null
        o["model"] = a.model.map { .string($0) } ?? .null
        o["lensModel"] = a.lensModel.map { .string($0) } ?? .null
        o["duration"] = a.duration.map { .double($0) } ?? .null
        o["frameRate"] = a.frameRate.map { .double($0) } ?? .null
        o["videoCodec"] = a.videoCodec.map { .string($0) } ?? .null
        o["audioCodec"] = a.audioCodec.map { .string($0) } ?? .null
        o["bitRate"] = a.bitRate.map { .int($0) } ?? .null
        o["captureFrameRate"] = a.captureFrameRate.map { .double($0) } ?? .null
        o["burstIdentifier"] = a.burstIdentifier.map { .string($0) } ?? .null
        o["representsBurst"] = .bool(a.representsBurst)
        o["rating"] = a.rating.map { .int(Int64($0)) } ?? .null
        o["keywords"] = .array(a.keywords.map { .string($0) })
        o["isFavorite"] = .bool(a.isFavorite)
        o["isHidden"] = .bool(a.isHidden)
        o["isAvailable"] = .bool(!offline.contains { a.path.isWithin($0) })
        o["fileSize"] = .int(a.fileSize)
        o["addedDate"] = .string(Timestamps.utcString(milliseconds: a.addedAt))
        o["resources"] = .array(a.resources.map { r in
            var ro = JSONObject()
            addPath(r.path, to: &ro)
            ro["role"] = .string(r.role.rawValue)
            return .object(ro)
        })
        return .object(o)
    }

    /// Where an asset was taken (`Place`): the names, `near` only for a gazetteer place beyond
    /// the city's reach, and where they came from. The time zone is the asset's `utcOffset`'s
    /// business, not the record's.
    static func place(_ p: Place) -> JSONValue {
        var o = JSONObject()
        o["city"] = p.city.map { .string($0) } ?? .null
        o["subLocation"] = p.subLocation.map { .string($0) } ?? .null
        o["region"] = p.region.map { .string($0) } ?? .null
        o["country"] = p.country.map { .string($0) } ?? .null
        o["countryCode"] = p.countryCode.map { .string($0) } ?? .null
        if let near = p.near { o["near"] = .string(near) }
        o["source"] = .string(p.source.rawValue)
        return .object(o)
    }

    /// A country, region or city of `places.fetch`, with what is below it.
    /// A collection record with its `kind` (for lists of several kinds: `collections.search`).
    static func kind(_ kind: String, _ record: JSONValue) -> JSONValue {
        guard case .object(var o) = record else { return record }
        o["kind"] = .string(kind)
        return .object(o)
    }

    static func place(node n: PlaceNode) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(n.id)
        o["kind"] = .string(n.kind.rawValue)
        o["title"] = .string(n.title)
        o["countryCode"] = n.countryCode.map { .string($0) } ?? .null
        o["assetCount"] = .int(Int64(n.assetCount))
        o["startDate"] = .string(n.start.description)
        o["endDate"] = .string(n.end.description)
        o["keyAssetIDs"] = keys(n.keyAssetIDs)
        if n.kind != .city { o["places"] = .array(n.children.map(place(node:))) }
        return .object(o)
    }

    /// `keyAssetIDs`: the asset ids that stand for a collection (`KeyAssets`).
    static func keys(_ ids: [AssetID]) -> JSONValue { .array(ids.map { .string($0.rawValue) }) }

    static func moment(_ m: Moment, keyAssetIDs: [AssetID]) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(m.id)
        o["localDate"] = .string(m.localDate)
        o["title"] = m.title.map { .string($0) } ?? .null
        o["dateTitle"] = .string(m.dateTitle)
        o["locationNames"] = .array(m.locationNames.map { .string($0) })
        o["startDate"] = .string(m.start.description)
        o["endDate"] = .string(m.end.description)
        o["assetCount"] = .int(Int64(m.assetCount))
        o["photoCount"] = .int(Int64(m.photoCount))
        o["videoCount"] = .int(Int64(m.videoCount))
        o["latitude"] = m.latitude.map { .double($0) } ?? .null
        o["longitude"] = m.longitude.map { .double($0) } ?? .null
        o["keyAssetIDs"] = keys(keyAssetIDs)
        return .object(o)
    }

    static func momentList(_ l: MomentList) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(l.id)
        o["kind"] = .string(l.kind.rawValue)
        o["title"] = .string(l.title)
        o["year"] = .int(Int64(l.year))
        o["month"] = l.month.map { .int(Int64($0)) } ?? .null
        o["startDate"] = .string(l.start.description)
        o["endDate"] = .string(l.end.description)
        o["assetCount"] = .int(Int64(l.assetCount))
        o["photoCount"] = .int(Int64(l.photoCount))
        o["videoCount"] = .int(Int64(l.videoCount))
        o["momentCount"] = .int(Int64(l.momentIDs.count))
        o["locationNames"] = .array(l.locationNames.map { .string($0) })
        o["momentIDs"] = .array(l.momentIDs.map { .string($0) })
        o["keyAssetIDs"] = keys(l.keyAssetIDs)
        return .object(o)
    }

    static func folderAlbum(_ a: FolderAlbum) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(a.id)
        o["title"] = .string(a.title)
        o["kind"] = .string("folder")
        addPath(a.path, to: &o)
        o["assetCount"] = .int(Int64(a.assetCount))
        o["startDate"] = a.start.map { .string($0.description) } ?? .null
        o["endDate"] = a.end.map { .string($0.description) } ?? .null
        o["keyAssetIDs"] = keys(a.keyAssetIDs)
        return .object(o)
    }

    static func smartAlbum(_ a: SmartAlbum, count: Int, keyAssetIDs: [AssetID]) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(a.id)
        o["title"] = .string(a.title)
        o["subtype"] = .string(a.subtype)
        o["assetCount"] = .int(Int64(count))
        o["rule"] = .string(a.rule)
        o["keyAssetIDs"] = keys(keyAssetIDs)
        return .object(o)
    }

    static func collectionList(_ l: CollectionList) -> JSONValue {
        var o = JSONObject()
        o["id"] = .string(l.id)
        o["title"] = .string(l.title)
        addPath(l.path, to: &o)
        o["parentID"] = l.parentID.map { .string($0) } ?? .null
        o["listIDs"] = .array(l.listIDs.map { .string($0) })
        o["albumIDs"] = .array(l.albumIDs.map { .string($0) })
        o["albumCount"] = .int(Int64(l.albumCount))
        o["assetCount"] = .int(Int64(l.assetCount))
        o["keyAssetIDs"] = keys(l.keyAssetIDs)
        return .object(o)
    }

    static func fileIssue(_ i: FileIssue) -> JSONValue {
        var o = JSONObject()
        addPath(i.path, to: &o)
        o["code"] = .string(i.code)
        o["message"] = .string(i.message)
        return .object(o)
    }

    static func userAlbum(_ a: UserAlbum) -> JSONValue {
        .object(["id": .string(a.id), "title": .string(a.title), "folderID": a.folderID.map { .string($0) } ?? .null,
                 "assetCount": .int(Int64(a.assetCount)), "createdDate": .string(Timestamps.utcString(milliseconds: a.createdAt)),
                 "updatedDate": .string(Timestamps.utcString(milliseconds: a.updatedAt)), "keyAssetIDs": keys(a.keyAssetIDs)])
    }

    static func userFolder(_ f: UserFolder) -> JSONValue {
        .object(["id": .string(f.id), "title": .string(f.title), "parentID": f.parentID.map { .string($0) } ?? .null,
                 "createdDate": .string(Timestamps.utcString(milliseconds: f.createdAt)),
                 "updatedDate": .string(Timestamps.utcString(milliseconds: f.updatedAt)), "keyAssetIDs": keys(f.keyAssetIDs)])
    }

    /// A change set: `{"token", "time", "assets": {inserted, updated, deleted}, "collections": {…}}`.
    static func changeSet(_ c: ChangeSet) -> JSONValue {
        func ids(_ list: [String]) -> JSONValue { .array(list.map { .string($0) }) }
        var assets = JSONObject()
        assets["inserted"] = ids(c.inserted.map(\.rawValue))
        assets["updated"] = ids(c.updated.map(\.rawValue))
        assets["deleted"] = ids(c.deleted.map(\.rawValue))
        var collections = JSONObject()
        collections["inserted"] = ids(c.collectionsInserted)
        collections["updated"] = ids(c.collectionsUpdated)
        collections["deleted"] = ids(c.collectionsDeleted)
        var o = JSONObject()
        o["token"] = .int(c.token ?? 0)
        o["time"] = .string(Timestamps.utcString(milliseconds: c.time))
        o["assets"] = .object(assets)
        o["collections"] = .object(collections)
        return .object(o)
    }

    /// Unavailable trees as `[{"path", "reason"}]`, in path order.
    static func unavailableTrees(_ trees: [PathBytes: String]) -> JSONValue {
        .array(trees.sorted { $0.key < $1.key }.map { path, reason in
            var o = JSONObject()
            addPath(path, to: &o)
            o["reason"] = .string(reason)
            return .object(o)
        })
    }

    static func scanReport(_ r: ScanReport) -> JSONValue {
        var o = JSONObject()
        o["files"] = .int(Int64(r.files))
        o["readFiles"] = .int(Int64(r.readFiles))
        o["removedFiles"] = .int(Int64(r.removedFiles))
        o["removedDirectories"] = .int(Int64(r.removedDirectories))
        o["movedFiles"] = .int(Int64(r.movedFiles))
        o["movedDirectories"] = .int(Int64(r.movedDirectories))
        o["restoredFiles"] = .int(Int64(r.restoredFiles))
        o["errors"] = .int(Int64(r.errors))
        o["busyFiles"] = .int(Int64(r.busyFiles))
        o["seconds"] = .double((r.seconds * 1000).rounded() / 1000)
        o["finishedAt"] = .string(Timestamps.utcString(milliseconds: r.finishedAt))
        return .object(o)
    }

    static func counts(_ c: LibraryCounts) -> JSONValue {
        var o = JSONObject()
        o["assets"] = .int(Int64(c.assets))
        o["recentlyDeleted"] = .int(Int64(c.recentlyDeleted))
        o["images"] = .int(Int64(c.images))
        o["videos"] = .int(Int64(c.videos))
        o["files"] = .int(Int64(c.files))
        o["errors"] = .int(Int64(c.errors))
        o["ignored"] = .int(Int64(c.ignored))
        o["directories"] = .int(Int64(c.directories))
        return .object(o)
    }
}

/// UTC timestamps for the wire (`2026-11-29T12:45:04.123Z`), without Foundation formatters.
enum Timestamps {
    static func utcString(milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let ms = Int(milliseconds - seconds * 1000)
        guard let t = LocalDateTime(unixSeconds: seconds, offsetSeconds: 0, millisecond: ms) else { return "1970-01-01T00:00:00.000Z" }
        return t.description + "Z"
    }
}

/// RFC 4648 base64, for `pathBytes`.
enum Base64 {
    private static let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)], table[Int(n >> 6 & 63)], table[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out += [table[Int(n >> 18 & 63)], table[Int(n >> 12 & 63)]]
            out += rest == 2 ? [table[Int(n >> 6 & 63)], UInt8(ascii: "=")] : [UInt8(ascii: "="), UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
