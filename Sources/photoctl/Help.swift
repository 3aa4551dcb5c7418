// photoctl's help texts: the overview and one page per subcommand (`-h`, `--help` and
// `photoctl help <subcommand>` print the same page).

let overview = """
    OVERVIEW: photoctl talks to photod, the photo and video library indexer.

    USAGE: photoctl [--socket PATH] [--json] <subcommand> [options]

    OPTIONS:
      --socket PATH     photod's socket (default: $PHOTOD_SOCKET; else $RUNTIME_DIRECTORY/photod.sock,
                        $XDG_RUNTIME_DIR/photod.sock or /tmp/photod-$UID/photod.sock, then the
                        system service's /run/photod/photod.sock). Allowed before or after the subcommand.
      --json            One JSON object per line instead of a table (every subcommand). Allowed before
                        or after the subcommand.
      --version         Print the version.
      -h, --help        Show help (also: photoctl help <subcommand>).

    SUBCOMMANDS:
      status            The daemon's state, counts and last scan.
      assets            List assets (the whole library, or one collection with --in ID), filtered and sorted.
      search            Find assets by words: file and folder names, keywords, places, cameras.
      moments           Moments: the days with photos, newest first.
      albums            Folder albums: the folders that hold photos.
      smart-albums      Smart albums (Favorites, Videos, Screenshots, ...) and their counts.
      folders           The folder tree (collection lists) above the albums.
      places            Where the photos were taken: countries, regions, cities.
      errors            Files that could not be indexed, with the reason.
      watch             Print each change set as it happens (survives daemon restarts).
      favorite          Mark assets as favorites.
      unfavorite        Unmark them.
      hide              Hide assets from fetches and most collections.
      unhide            Show hidden assets again.
      album             User albums and folders: list, create, rename, move, delete, add, remove.
      keywords          Set, add or remove a tagger's keywords on an asset.
      rescan            Compare the library (or a directory in it) with the disk now.
      adopt             Accept a library root (or mount below one) that moved to another disk.
      trash             Move assets to Recently Deleted: their files get hidden names in place.
      restore           Bring assets back from Recently Deleted, their files under their names.
      delete            Delete assets in Recently Deleted and their files for good (asks first).
      image             Render an asset at a size; print the path of the image file.

    Writes (favorite, hide, album, keywords, rescan, adopt, trash, restore, delete) are for root, photod's
    user and its --write-group; trash, restore and delete only on roots photod runs with --trash-root for.

    The lists' --json output (assets, moments, albums, smart-albums, folders, album list) ends with a
    line {"token":N}: the change token the records reflect. 'watch --since N' then prints every
    change set committed after the list was read and none from before it:
      photoctl assets --json > snapshot.jsonl
      photoctl watch --json --since "$(tail -n 1 snapshot.jsonl | tr -dc 0-9)"

    Exit codes: 0 success, 1 failure (a failed write to stdout too: "write error: ..."), 64 usage
    error, 69 photod unreachable, 77 permission denied (ask to be added to the socket's group).
    """

/// The subcommands, in the order the overview lists them.
let subcommands = ["status", "assets", "search", "moments", "albums", "smart-albums", "folders", "places", "errors", "watch", "favorite", "unfavorite",
                   "hide", "unhide", "album", "keywords", "rescan", "adopt", "trash", "restore", "delete", "image"]

/// Subcommands whose help page another one shares.
let helpAliases = ["unfavorite": "favorite", "unhide": "hide", "restore": "trash", "delete": "trash"]

let helps: [String: String] = [
    "status": """
        OVERVIEW: Show photod's state (indexing or idle), counts and last scan.

        USAGE: photoctl status [--wait] [--timeout SECONDS] [--json]

        OPTIONS:
          --wait              Return only once photod is idle (no scan running, nothing pending).
                              A missing or refusing socket is retried until the timeout, so this
                              can follow the daemon's start at once.
          --timeout SECONDS   How long --wait waits (default 120).
          --json              One JSON object (library.status's result) instead of a table.
        """,
    "assets": """
        OVERVIEW: List assets in the default order (capture time, then path), or the
        assets of one collection (a moment, a folder album, a smart album or a user album) in its
        order; optionally filtered by a predicate and sorted by other keys.

        USAGE: photoctl assets [--in COLLECTION_ID] [--where PREDICATE] [--sort KEYS] [--include-hidden]
                               [--limit N] [--json]

        OPTIONS:
          --in ID             A collection id: m_20190504 (moment), f_... (album), s_favorites (smart album),
                              u_... (user album).
          --where PREDICATE   Only assets that match (docs/PREDICATES.md), for example
                              'mediaType == "image" AND pixelWidth > 1000' or 'keywords CONTAINS "cat"'.
                              A predicate photod cannot parse is a usage error (exit 64): the message,
                              then the predicate with a ^ under the spot.
          --sort KEYS         Comma-separated sort keys, '-' for descending: -localDateTime,pixelWidth.
          --include-hidden    Include hidden assets (left out by default, except in s_hidden).
          --limit N           At most N assets (default: all, fetched a page at a time).
          --json              One JSON object per asset per line (the asset record), then a last line
                              {"token":N}: the change token the list reflects (see 'watch --since').

        EXAMPLES:
          photoctl assets --where 'isFavorite == true' --sort -localDateTime --limit 20
          photoctl assets --in s_videos --json
        """,
    "moments": """
        OVERVIEW: List moments (one per calendar day on the capture clock), newest first.

        USAGE: photoctl moments [--year YYYY [--month M]] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--limit N] [--json]

        OPTIONS:
          --year YYYY         Only this year (with --month: only this month).
          --from, --to        Only days in this range (inclusive).
          --limit N           At most N moments.
          --json              One JSON object per moment per line, then {"token":N}.
        """,
    "albums": """
        OVERVIEW: List folder albums (every folder that directly holds photos or videos), in path order.
        User albums are listed by 'photoctl album list'.

        USAGE: photoctl albums [--limit N] [--json]

        OPTIONS:
          --limit N           At most N albums.
          --json              One JSON object per album per line, then {"token":N}.
        """,
    "smart-albums": """
        OVERVIEW: List the smart albums with their counts and rules.

        USAGE: photoctl smart-albums [--json]

        OPTIONS:
          --json              One JSON object per smart album per line, then {"token":N}.
        """,
    "search": """
        OVERVIEW: Find assets by words in their file and folder names, keywords, place names and
        camera, most relevant first (then newest). Case and accents do not matter ("sao paulo"
        finds São Paulo); the last word also finds words it begins ("lisb" finds Lisbon); words
        in double quotes are a phrase. Every word must match.

        USAGE: photoctl search WORDS... [--where PREDICATE] [--sort KEYS] [--include-hidden] [--limit N] [--json]

        OPTIONS:
          --where PREDICATE   Only assets that match (docs/PREDICATES.md), as with assets.
          --sort KEYS         Another order than relevance ("-localDateTime").
          --include-hidden    Let hidden assets in.
          --limit N           At most N assets.
          --json              One JSON object per asset per line, then {"token":N}.
        """,
    "places": """
        OVERVIEW: Show where the photos were taken: countries, their regions and cities, with counts
        and the ids that list their assets (photoctl assets --in ID). Names come from the files'
        location fields or, offline, from the GeoNames place of their coordinates.

        USAGE: photoctl places [--json]

        OPTIONS:
          --json              One JSON object per country per line (regions and cities inside), then {"token":N}.
        """,
    "folders": """
        OVERVIEW: Show the folder tree (collection lists) with the albums in it.

        USAGE: photoctl folders [--json]

        OPTIONS:
          --json              One JSON object per collection list per line, then {"token":N}.
        """,
    "errors": """
        OVERVIEW: List files that could not be indexed, with the reason.

        USAGE: photoctl errors [--json]

        OPTIONS:
          --json              One JSON object per file per line: path, code, message (no token line:
                              per-file errors are not in the change sets).
        """,
    "watch": """
        OVERVIEW: Subscribe to photod's change sets and print each one as it is committed, until
        interrupted (SIGINT or SIGTERM: exit 0). Each line is written at once, so a pipe sees it.

        When the connection drops (photod restarted or killed), photoctl says 'reconnecting…' on
        stderr, retries every 100 ms to 2 s, and resubscribes after the last token it printed:
        no change set is lost or printed twice. When the token has expired (pruned from the
        journal, or a rebuilt database) it says so on stderr — whatever you keep from photod must
        be refetched — and goes on from the current token. Only the first connection is not
        retried: if photod cannot be reached at the start, watch exits 69.

        USAGE: photoctl watch [--since TOKEN] [--in COLLECTION_ID | --media-type image|video] [--json]

        OPTIONS:
          --since TOKEN       Start after this change token (the {"token":N} line that ends a list's
                              --json output, a fetch's 'token' or a previous watch), so the change sets
                              committed since are printed first. Default: from now.
          --in ID             Only the change sets that touch this collection.
          --media-type TYPE   Only assets of this type: image or video.
          --json              One JSON object per change set per line (the 'changes' notification's params).

        OUTPUT:
          token 123  2026-11-29T16:00:00Z  assets +2 ~1 -0  collections +0 ~3 -0
            + a_3ocnwoznuaa7slhsdfeq
            ~ m_20261129

        EXAMPLES:
          # A snapshot, then every change after it: none missed, none from before it.
          photoctl assets --json > snapshot.jsonl
          photoctl watch --json --since "$(tail -n 1 snapshot.jsonl | tr -dc 0-9)"
        """,
    "favorite": """
        OVERVIEW: Mark assets as favorites (favorite) or unmark them (unfavorite).

        USAGE: photoctl favorite ASSET_ID...
               photoctl unfavorite ASSET_ID...

        OPTIONS:
          --json              Print photod's answer as one JSON object: {"token", "updated": [ids that changed]}.

        An unknown id fails the whole write (exit 1).
        """,
    "trash": """
        OVERVIEW: Move assets to Recently Deleted (trash), bring them back (restore), or delete them
        and their files for good (delete: only assets in Recently Deleted; asks first).

        USAGE: photoctl trash ASSET_ID...
               photoctl restore ASSET_ID...
               photoctl delete [--yes] ASSET_ID...

        OPTIONS:
          --json              Print photod's answer as one JSON object.
          --yes               (delete) Do not ask.

        trash renames every file of each asset (RAW, paired video, sidecar too) in its own folder to
        a hidden name, .photod-trashed-<expiry>-<name>, which photod recognises; nothing is copied or
        deleted. The assets keep their ids, favorites and albums. restore renames them back (a name
        taken meanwhile gets " (1)", said on the output). delete unlinks the trashed files; after
        --retention-days photod does that itself. Only on library roots photod runs with
        --trash-root for; anything refused is listed with its reason and nothing is changed (exit 1).
        """,
    "hide": """
        OVERVIEW: Hide assets (hide) — fetches leave them out unless asked — or show them again (unhide).
        Hidden assets are in the s_hidden smart album.

        USAGE: photoctl hide ASSET_ID...
               photoctl unhide ASSET_ID...

        OPTIONS:
          --json              Print photod's answer as one JSON object: {"token", "updated": [ids that changed]}.
        """,
    "album": """
        OVERVIEW: Manage user albums (u_...) and the folders (uf_...) that hold them. Assets stay
        where they are on disk; an album only lists them.

        USAGE: photoctl album list [--json]
               photoctl album create TITLE [--folder FOLDER_ID]
               photoctl album create-folder TITLE [--folder FOLDER_ID]
               photoctl album rename ID TITLE
               photoctl album move ID (--folder FOLDER_ID | --top)
               photoctl album delete ID
               photoctl album add ALBUM_ID ASSET_ID...
               photoctl album remove ALBUM_ID ASSET_ID...

        SUBCOMMANDS:
          list                The folders and albums as a tree, with asset counts
                              (--json: one object per folder, then per album, with "kind"; then
                              {"token":N}).
          create              Create an album (in a folder, or at the top); prints its id.
          create-folder       Create a folder (in a folder, or at the top); prints its id.
          rename              Rename an album or a folder.
          move                Move an album or a folder into a folder, or to the top.
          delete              Delete an album, or a folder with everything in it (the assets stay).
          add, remove         Add assets to an album, or take them out.

        OPTIONS:
          --folder FOLDER_ID  The folder to create in or move to.
          --top               Move to the top level.
          --json              Print photod's answer as one JSON object per line.

        A title that starts with '-' follows '--': photoctl album rename u_x -- '-draft-'.
        """,
    "keywords": """
        OVERVIEW: Write a tagger's keywords on an asset. Each source (a tagger's name) has its own
        keywords; an asset's keywords are its files' keywords plus every source's.

        USAGE: photoctl keywords set --source NAME ASSET_ID [KEYWORD...]
               photoctl keywords add --source NAME ASSET_ID KEYWORD...
               photoctl keywords remove --source NAME ASSET_ID KEYWORD...

        SUBCOMMANDS:
          set                 The source's keywords become exactly these (none: clears them).
          add                 Adds these to the source's keywords.
          remove              Removes these from the source's keywords.

        OPTIONS:
          --source NAME       The tagger's name (1 to 100 characters), required.
          --json              Print photod's answer as one JSON object: {"token", "updated": [...]}.
        """,
    "rescan": """
        OVERVIEW: Compare the whole library, or one directory tree inside it, with the disk now, and
        apply what differs (not needed normally: photod watches the library). Returns when done.

        USAGE: photoctl rescan [PATH] [--json]

        OPTIONS:
          PATH                A directory inside a library root (relative to the current directory).
          --json              Print photod's answer as one JSON object: {"token", "rescanned": [paths]}
                              (with "unavailable": [{"path", "reason"}] for a whole-library rescan).

        A directory in a root or mount that is unavailable (an unmounted disk or share) is not
        compared: nothing in it is removed, and the answer is an error that says why (exit 1).
        """,
    "adopt": """
        OVERVIEW: Tell photod that a library root, or a mount point below one, now really lives on
        another disk or file system. photod keeps every tree on the file system it was indexed on:
        an unmounted disk, an unmounted bind mount or a share gone away is "unavailable", and nothing
        in it is removed. When the library was copied to a new disk, photod reports the tree
        unavailable ("another file system is mounted here") until it is adopted. Adopting scans the
        tree: files are matched to their assets by content (size and fingerprint), so ids, favorites
        and albums carry over; a different photo under an old name is a new asset; files of the old
        disk found nowhere go to Recently Deleted (kept 30 days). Mount points below keep their own
        records. A mount point that is gone for good can be adopted too: what it held goes to
        Recently Deleted. Returns when done.

        USAGE: photoctl adopt PATH [--json]

        OPTIONS:
          PATH                A library root, or a mount point below one ('photoctl status' lists
                              the unavailable ones).
          --json              Print photod's answer as one JSON object:
                              {"token", "adopted": path, "scan": {files, readFiles, ...}, "recentlyDeleted": N}.
        """,
    "image": """
        OVERVIEW: Render an asset at a size (from photod's image cache when it is there) and print the
        absolute path of the image file (.jpg, or .png for images with transparency) on one line.

        USAGE: photoctl image ID --size WxH [--mode fit|fill] [--fast] [--json]

        OPTIONS:
          ID                  The asset's id (see 'photoctl assets').
          --size WxH          The target size in pixels, e.g. 512x512 (each side 1...16384).
          --mode fit|fill     fit (default): the largest image of the asset's proportions inside WxH;
                              fill: covers WxH and is cropped to exactly WxH. Never larger than the
                              photo itself.
          --fast              Accept a degraded image (the embedded EXIF thumbnail, or another cached
                              size) when one is at hand, instead of waiting for the render.
          --json              Print photod's answer as one JSON object: {"asset", "path", "width",
                              "height", "format", "isDegraded"}.

        A video's image is its poster frame. GIF, TIFF, RAW, BMP, JPEG 2000 and JPEG XL files have none
        (exit 1, unsupported).
        """,
]

/// The help page of `command` (an alias's shared page), or nil for an unknown subcommand.
func help(for command: String) -> String? {
    helps[helpAliases[command] ?? command]
}
