import CLinux
import Foundation
import PhotoDaemon
import PhotoSystem

let environment = ProcessInfo.processInfo.environment
let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    switch error {
    case .print(let text):
        print(text)
        exit(0)
    case .usage(let message):
        FileHandle.standardError.write(Data("photod: \(message)\nUsage: photod --library DIR [options]; see 'photod --help'.\n".utf8))
        exit(64)
    }
}
photo_stdout_line_buffered()
let logger = Logger(facility: "photod", threshold: options.logLevel)
do {
    try Daemon(options: options, logger: logger).run()
} catch {
    logger.error("cannot start: \(error.description)")
    exit(1)
}
