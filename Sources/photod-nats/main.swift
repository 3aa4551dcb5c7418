import CLinux
import Foundation
import PhotoBridge
import PhotoSystem

// photod-nats: publishes photod's change sets to NATS JetStream (docs/DISTRIBUTED.md).
let environment = ProcessInfo.processInfo.environment
let options: BridgeOptions
do {
    options = try BridgeOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    switch error {
    case .print(let text):
        print(text)
        exit(0)
    case .usage(let message):
        FileHandle.standardError.write(Data("photod-nats: \(message)\nUsage: see 'photod-nats --help'.\n".utf8))
        exit(64)
    }
}
photo_stdout_line_buffered()
let logger = Logger(facility: "nats", sink: LogSetup.sink(for: LogSetup.destination(environment: environment), identifier: "photod-nats"))
signal(SIGPIPE, SIG_IGN)
if options.check {
    exit(BridgeCheck.run(options) ? 0 : 1)
}
if options.statusQuery {
    exit(BridgeStatus.run(options) ? 0 : 1)
}
// Runs its parts (watchdog, request/reply, publisher) until SIGTERM or SIGINT stops them in
// reverse order.
Bridge(options: options, logger: logger, environment: environment).run()
