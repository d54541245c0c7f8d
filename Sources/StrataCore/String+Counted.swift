extension String {
    /// `1 key`, `3 keys`: a count and its noun, for the lines operators read ("1 keys" reads
    /// as a slip, and "key(s)" as a form to fill in).
    public static func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }
}
