import PhotoModel
import PhotoSystem
import PhotoWire

/// `photod-nats --check`: what the bridge would do, and whether both ends answer.
public enum BridgeCheck {
    public static func run(_ options: BridgeOptions) -> Bool {
        print("photod:  \(options.sockets.map(\.string).joined(separator: " or "))")
        print("NATS:    \(options.servers)" + (options.credentials.map { ", credentials \($0)" } ?? "")
              + (options.caFile.map { ", TLS with CA \($0)" } ?? ""))
        print("stream:  \(options.stream) (subjects photod.*.changes, photod.*.resync)")
        print("publish: \(options.changesSubject), resync events on \(options.resyncSubject)")
        print("serve:   \(options.rpcSubject) (" + (options.allowWrites ? "reads and writes" : "reads only; writes refused") + "), status on \(options.statusSubject)")
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

/// `photod-nats --status`: the running bridge's answer on `photod.<name>.bridge.status`.
public enum BridgeStatus {
    public static func run(_ options: BridgeOptions) -> Bool {
        let reply: NATSMessage
        do {
            let nats = try NATSClient(urls: options.servers, name: "photod-nats status", credentials: options.credentials,
                                      caFile: options.caFile)
            reply = try nats.request(subject: options.statusSubject, payload: [], timeout: .seconds(5))
        } catch {
            print("photod-nats --status: no bridge answers on \(options.statusSubject) at \(options.servers): \(error)")
            return false
        }
        let text = String(decoding: reply.payload, as: UTF8.self)
        if options.json {
            print(text)
            return true
        }
        guard let s = try? JSONValue.parse(text) else {
            print("photod-nats --status: the answer is not JSON: \(text.prefix(200))")
            return false
        }
        func show(_ v: JSONValue?) -> String {
            guard let v, !v.isNull else { return "unknown" }
            return v.stringValue ?? v.jsonString
        }
        print("photod-nats \(show(s["name"])): publishing \(show(s["subject"])) to the stream \(show(s["stream"])), "
              + "started \(show(s["startedAt"]))")
        print("  NATS:   " + (s["nats"]?["connected"]?.boolValue == true ? "connected" : "NOT CONNECTED")
              + " (\(show(s["nats"]?["servers"])), max_payload \(show(s["nats"]?["maxPayload"])))")
        print("  photod: " + (s["photod"]?["connected"]?.boolValue == true ? "connected, token \(show(s["photod"]?["token"]))" : "NOT CONNECTED"))
        if s["subject"]?.isNull == true {
            print("  publishing nothing (--rpc-only)")
        } else if s["lastPublishedAt"]?.isNull ?? true {
            print("  published: nothing since it started (\(show(s["resyncs"])) resync events)")
        } else {
            print("  published: last token \(show(s["lastPublishedToken"])) at \(show(s["lastPublishedAt"])), "
                  + "\(show(s["published"])) change sets since it started, \(show(s["resyncs"])) resync events; the last one was in "
                  + "the stream \(show(s["lastLatencyMilliseconds"])) ms after photod committed it")
        }
        print("  lag: \(show(s["lag"]?["changeSets"])) change sets, \(show(s["lag"]?["milliseconds"])) ms")
        let rpc = s["rpc"]
        print("  rpc: \(show(rpc?["subject"])), " + (rpc?["allowWrites"]?.boolValue == true ? "reads and writes" : "reads only")
              + ", \(show(rpc?["workers"])) workers: \(show(rpc?["served"])) served (\(show(rpc?["images"])) images), "
              + "\(show(rpc?["refused"])) refused, \(show(rpc?["failed"])) failed")
        return true
    }
}
