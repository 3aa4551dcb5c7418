/// A number with a fixed count of decimals (`%.2f`), without Foundation's `String(format:)`.
public func fixedDecimals(_ value: Double, _ places: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<max(0, places) { scale *= 10 }
    let scaled = (abs(value) * scale).rounded(.toNearestOrEven)
    guard scaled < 9.0e18 else { return String(value) }
    let units = UInt64(scaled)
    let whole = units / UInt64(scale), fraction = units % UInt64(scale)
    var text = (value < 0 && units > 0 ? "-" : "") + String(whole)
    if places > 0 {
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: places - digits.count) + digits
    }
    return text
}

/// `n` as `width` upper-case hexadecimal digits at least (`%04X`).
public func hexDigits<T: BinaryInteger>(_ n: T, width: Int) -> String {
    let digits = String(n, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
