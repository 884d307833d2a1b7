/// Suggests the known key nearest to a misspelt one, by edit distance.
enum KeySuggester {
    /// The known key nearest to `key` (ignoring case), or `nil`
    /// when none is close enough: at most a third of the longer key's length in edits, and at least 1.
    static func nearest(to key: String, among known: [String]) -> String? {
        let candidate = key.lowercased()
        var best: (key: String, distance: Int)?
        let length = candidate.count
        for knownKey in known {
            // The distance is at least the difference in length: a key far longer or shorter than every known key
            // is never near, and is not measured (the cost stays linear in the size of the file).
            guard abs(length - knownKey.count) <= max(1, max(length, knownKey.count) / 3) else { continue }
            let distance = editDistance(candidate, knownKey.lowercased())
            if distance < (best?.distance ?? Int.max) { best = (knownKey, distance) }
        }
        guard let best else { return nil }
        let allowed = max(1, max(candidate.count, best.key.count) / 3)
        return best.distance <= allowed ? best.key : nil
    }

    /// The Damerau–Levenshtein distance (insertions, deletions, substitutions, adjacent transpositions).
    static func editDistance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs), b = Array(rhs)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previousPrevious[j - 2] + 1)
                }
                current[j] = value
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
