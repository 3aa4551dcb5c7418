/// A closure to keep in a `Locked` (or any generic container accessed `inout`).
///
/// Never keep a bare function value there: each `inout` access reabstracts it to the
/// container's generic form and stores the result back, so every `withLock { $0 }` wraps the
/// stored closure in two more thunks — a chain that grows with every call until each call walks
/// it (photod's commits and change-set deliveries slowed down by milliseconds per thousand, and
/// would eventually overflow the stack). A struct around the closure is stored and accessed as
/// it is.
public struct Callback<Input, Output>: Sendable {
    public let body: @Sendable (Input) -> Output

    public init(_ body: @escaping @Sendable (Input) -> Output) { self.body = body }

    public func callAsFunction(_ input: Input) -> Output { body(input) }
}
