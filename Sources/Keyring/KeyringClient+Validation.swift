/// What every call checks before anything is sent.
extension KeyringClient {
    /// Throws unless `attributes` are some, fit the schema, and hold no NUL.
    func validate(_ attributes: KeyringAttributes) throws {
        guard !attributes.isEmpty else { throw KeyringError.invalidAttributes("at least one attribute is needed") }
        try schema.validate(attributes)
        // C strings end at NUL: "a\0b" would address the item "a".
        if let (name, _) = attributes.first(where: { $0.value.utf8.contains(0) }) {
            throw KeyringError.invalidAttributes("the value of attribute \(name) contains a NUL character")
        }
    }

    /// Throws unless the alias can be an element of a D-Bus object path: ASCII letters, digits and `_`.
    func validate(_ collection: KeyringCollection) throws {
        let alias = collection.alias.utf8
        guard !alias.isEmpty, alias.allSatisfy({ byte in
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F
        }) else {
            throw KeyringError.invalidAttributes("'\(collection.alias)' is not a collection alias: use ASCII letters, digits and _")
        }
    }

}
