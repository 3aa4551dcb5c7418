import PhotoModel
import PhotoSystem

/// `photod-nats --check`: what the bridge would do, and whether both ends answer.
public enum BridgeCheck {
    public static func run(_ options: BridgeOptions) -> Bool {
        print("photod:  \(options.sockets.map(\.string).joined(separator: " or "))")
        print("NATS:    \(options.servers)" + (options.credentials.map { ", credentials \($0)" } ?? "")
              + (options.caFile.map { ", TLS with CA \($0)" } ?? ""))
        print("stream:  \(options.stream) (subjects photod.*.changes, photod.*.resync)")
        print("publish: \(options.changesSubject), resync events on \(options.resyncSubject)")
        var ok = true
        do {
            let feed = try PhotodFeed.connect(options.sockets)
            defer { feed.close() }
            print("photod answers at \(feed.socket)")
        } catch {
            print("photod does not answer: \(error)")
            ok = false
        }
        do {
            let nats = try NATSClient(urls: options.servers, name: "photod-nats check", credentials: options.credentials,
                                      caFile: options.caFile)
            print("NATS answers (max_payload \(nats.maxPayload) bytes)")
            if try nats.lastSequence(stream: options.stream) == nil {
                print("the stream \(options.stream) does not exist yet: the bridge makes it")
            } else if let token = try Bridge.resumePoint(nats, options).token {
                print("the stream holds \(options.name)'s change sets up to token \(token): the bridge resumes after it")
            } else {
                print("the stream holds no change set of \(options.name) yet: the bridge starts from photod's current token")
            }
        } catch {
            print("NATS: \(error)")
            ok = false
        }
        return ok
    }
}
