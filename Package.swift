// swift-tools-version:6.2
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (the tools-version default),
/// the upcoming features the project is written against, and no warnings.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .enableUpcomingFeature("InferIsolatedConformances"),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "photod",
    products: [
        .executable(name: "photod", targets: ["photod"]),
        .executable(name: "photoctl", targets: ["photoctl"]),
        .executable(name: "photod-nats", targets: ["photod-nats"]),
        .library(name: "PhotoClient", targets: ["PhotoClient"]),
    ],
    targets: [
        // C layer: module maps and shims.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // libexif (libexif-dev): only the tests link it, as the oracle for photod's own EXIF decoding.
        .systemLibrary(name: "CExif", pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CLinux", cSettings: [.define("_GNU_SOURCE")]),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        // libtiff (libtiff-dev): TIFF's first page through its RGBA interface, a band of rows at a time.
        .target(name: "CTIFF", linkerSettings: [.linkedLibrary("tiff")]),
        // giflib (libgif-dev): a GIF's first frame on its logical screen.
        .target(name: "CGIF", linkerSettings: [.linkedLibrary("gif")]),
        // LibRaw (libraw-dev, the reentrant libraw_r): a RAW's embedded preview, or its sensor data developed.
        .target(name: "CRaw", linkerSettings: [.linkedLibrary("raw_r")]),
        // OpenJPEG (libopenjp2-7-dev): JPEG 2000 at the resolution level a request needs.
        .target(name: "COpenJPEG", linkerSettings: [.linkedLibrary("openjp2")]),
        // libjxl (libjxl-dev): JPEG XL's first frame.
        .target(name: "CJXL", linkerSettings: [.linkedLibrary("jxl")]),
        // zlib (zlib1g-dev): PNG text chunks that are compressed (zTXt, iTXt), for the metadata
        // reader. A target of its own: zlib.h pulls glibc headers this module must not capture.
        .target(name: "CZlib", linkerSettings: [.linkedLibrary("z")]),
        // libpng (its errors longjmp, which Swift cannot catch) and the resampler's inner loops.
        .target(name: "CImaging", linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("m")]),
        // Text search's inner loops inside SQLite (an aggregate and an FTS5 auxiliary function).
        .target(name: "CSearch", linkerSettings: [.linkedLibrary("sqlite3")]),
        // FFmpeg's libraries (libavformat-dev, libavcodec-dev, libswscale-dev, libavutil-dev):
        // videos' streams and poster frames. Opened with dlopen at the first video (video.c),
        // not linked: a library of photos never maps them and the hundred libraries they pull in.
        .target(name: "CVideo", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("m")]),
        // libheif (libheif-dev) opened at the first HEIF file: Sources/CHeif/heif.c.
        .target(name: "CHeif", linkerSettings: [.linkedLibrary("dl")]),

        // libgeonames (libgeonames-dev): the GeoNames cities, for naming where a photo was taken.
        .systemLibrary(name: "CGeoNames", providers: [.apt(["libgeonames-dev"])]),

        // nats.c (libnats-dev): photod-nats's NATS and JetStream calls, in C steps of its own.
        .target(name: "CNATS", linkerSettings: [.linkedLibrary("nats")]),

        // Pure layer: no I/O, no C.
        .target(name: "PhotoModel", swiftSettings: strict),
        .target(name: "PhotoWire", swiftSettings: strict),

        // Adapters.
        .target(name: "PhotoSystem", dependencies: ["CLinux", "PhotoModel"], swiftSettings: strict),
        .target(name: "PhotoMetadata", dependencies: ["PhotoModel", "PhotoSystem", "CVideo", "CZlib"], swiftSettings: strict),
        .target(name: "PhotoStore", dependencies: ["PhotoModel", "PhotoSystem", "CSQLite", "CSearch", "CLinux"], swiftSettings: strict),
        .target(name: "PhotoImaging", dependencies: ["PhotoModel", "PhotoSystem", "PhotoMetadata", "CTurboJPEG", "CWebP", "CHeif", "CTIFF", "CGIF",
                                                     "CRaw", "COpenJPEG", "CJXL", "CImaging", "CVideo"],
                swiftSettings: strict),
        .target(name: "PhotoWatch", dependencies: ["PhotoModel", "PhotoSystem", "CLinux"], swiftSettings: strict),
        .target(name: "PhotoPlaces", dependencies: ["PhotoModel", "PhotoSystem", "CGeoNames"], swiftSettings: strict),

        // Orchestration.
        .target(name: "PhotoPipeline", dependencies: ["PhotoModel", "PhotoSystem", "PhotoMetadata", "PhotoStore", "PhotoWatch"],
                swiftSettings: strict),

        // Products.
        .target(name: "PhotoClient", dependencies: ["PhotoModel", "PhotoWire", "PhotoSystem"], swiftSettings: strict),
        .target(name: "PhotoDaemon",
                dependencies: ["PhotoModel", "PhotoWire", "PhotoSystem", "PhotoMetadata", "PhotoStore", "PhotoWatch", "PhotoPipeline", "PhotoImaging",
                               "PhotoPlaces"],
                swiftSettings: strict),
        .executableTarget(name: "photod", dependencies: ["PhotoDaemon"], swiftSettings: strict),
        // The NATS bridge: a client of photod's socket, publishing to JetStream.
        .target(name: "PhotoBridge", dependencies: ["PhotoModel", "PhotoWire", "PhotoSystem", "CNATS"], swiftSettings: strict),
        .executableTarget(name: "photod-nats", dependencies: ["PhotoBridge", "PhotoSystem", "CLinux"], swiftSettings: strict),
        .executableTarget(name: "photoctl", dependencies: ["PhotoClient", "PhotoWire", "PhotoSystem"], swiftSettings: strict),
        .executableTarget(name: "photod-thumb-bench", dependencies: ["PhotoImaging", "PhotoModel", "PhotoSystem"], swiftSettings: strict),
        .executableTarget(name: "photod-bench", dependencies: ["PhotoModel", "PhotoStore", "PhotoPipeline", "PhotoSystem"],
                          swiftSettings: strict),

        // Test support and tests.
        .target(name: "PhotoTesting", dependencies: ["PhotoModel", "PhotoSystem", "PhotoStore", "CHeif"], swiftSettings: strict),
        .testTarget(name: "PhotoModelTests", dependencies: ["PhotoModel", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoSystemTests", dependencies: ["PhotoSystem", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWireTests", dependencies: ["PhotoWire"], swiftSettings: strict),
        .testTarget(name: "PhotoMetadataTests", dependencies: ["PhotoMetadata", "PhotoTesting", "CExif"], swiftSettings: strict),
        .testTarget(name: "PhotoImagingTests", dependencies: ["PhotoImaging", "PhotoMetadata", "PhotoTesting", "CTurboJPEG"],
                    swiftSettings: strict),
        .testTarget(name: "PhotoStoreTests", dependencies: ["PhotoStore", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoPlacesTests", dependencies: ["PhotoPlaces", "PhotoModel", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoWatchTests", dependencies: ["PhotoWatch", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoClientTests", dependencies: ["PhotoClient", "PhotoWire", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoDaemonTests", dependencies: ["PhotoDaemon", "PhotoClient", "PhotoImaging", "PhotoSystem", "PhotoTesting", "PhotoBridge"], swiftSettings: strict),
        .testTarget(name: "PhotoBridgeTests", dependencies: ["PhotoBridge", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "PhotoPipelineTests", dependencies: ["PhotoPipeline", "PhotoWatch", "PhotoTesting"], swiftSettings: strict),
        .testTarget(name: "EndToEndTests",
                    dependencies: ["PhotoClient", "PhotoWire", "PhotoStore", "PhotoSystem", "PhotoTesting", "PhotoImaging", "PhotoBridge",
                                   "photod", "photoctl", "photod-nats"],
                    swiftSettings: strict),
    ]
)
