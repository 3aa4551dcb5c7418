import Glibc
import CLinux
import PhotoDaemon
import PhotoSystem

// Before any thread exists (threads inherit the mask): a launcher may have blocked the signals
// photod stops and reloads on (systemd-socket-activate does), and blocked they never arrive.
var handled = sigset_t()
sigemptyset(&handled)
for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&handled, sig) }
sigprocmask(SIG_UNBLOCK, &handled, nil)

let environment = ProcessEnvironment.current
let options: DaemonOptions
do {
    options = try DaemonOptions.parse(Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    switch error {
    case .print(let text):
        print(text)
        exit(0)
    case .usage(let message):
        // Under systemd (stderr is the journal) at priority err through the journal's own
        // protocol, so that `journalctl -p err -u photod` shows why; the unit does not restart
        // photod on this exit status (RestartPreventExitStatus=64): a restart would fail the same way.
        let checking = CommandLine.arguments.contains("--check-config")
        let destination = LogSetup.destination(environment: environment)
        if destination == .stderr {
            writeStandardError("photod: \(message)\nUsage: photod --library DIR [options]; see 'photod --help'.\n")
        } else {
            let logger = Logger(facility: "photod", sink: LogSetup.sink(for: destination))
            logger.error((checking ? "the configuration is not valid: " : "configuration error, not starting: ") + message
                         + " (exit status 64; see 'photod --help')")
        }
        exit(64)
    }
}
if options.checkOnly {
    // `systemctl reload` runs this (ExecReload=) with its output in the journal.
    let destination = LogSetup.destination(environment: environment)
    if destination == .stderr {
        print("photod: the configuration is valid: " + options.summary)
    } else {
        Logger(facility: "photod", sink: LogSetup.sink(for: destination)).notice("the configuration is valid: " + options.summary)
    }
    exit(0)
}
photo_stdout_line_buffered()
_ = photo_malloc_return_large_blocks()
// The journal when stderr is the journal (or PHOTOD_JOURNAL_SOCKET names one), else stderr;
// PHOTOD_DEBUG=watch,pipeline,… turns on debug output per facility.
let logger = Logger.daemon(threshold: options.logLevel, environment: environment)
do {
    try Daemon(options: options, logger: logger).run()
} catch {
    logger.error("cannot start: \(error.description)")
    exit(1)
}
