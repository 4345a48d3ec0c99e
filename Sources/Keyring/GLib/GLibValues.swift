import CLibSecret

/// Conversions between Swift values and the GLib containers libsecret takes and returns.
enum GLibValues {
    /// The value in a `Properties.Get` reply `(v)`, checked to be of `type`. Unref it when done.
    static func unboxed(_ reply: OpaquePointer, _ type: String) throws -> OpaquePointer {
        let boxed = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(boxed) }
        let value = g_variant_get_variant(boxed)!
        guard String(cString: g_variant_get_type_string(value)) == type else {
            g_variant_unref(value)
            throw KeyringError.invalidItemData("a property has an unexpected type")
        }
        return value
    }

    /// `read` of the first value in `reply`; releases the reply.
    static func first<Value>(of reply: OpaquePointer, _ read: (OpaquePointer) -> Value) -> Value {
        defer { g_variant_unref(reply) }
        let value = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(value) }
        return read(value)
    }

    /// Reads an `a{ss}` variant; does not unref it.
    static func dictionary(fromAttributes variant: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        for index in 0..<Int(g_variant_n_children(variant)) {
            let entry = g_variant_get_child_value(variant, gsize(index))!
            defer { g_variant_unref(entry) }
            let key = g_variant_get_child_value(entry, 0)!, value = g_variant_get_child_value(entry, 1)!
            defer { g_variant_unref(key); g_variant_unref(value) }
            result[String(cString: g_variant_get_string(key, nil))] = String(cString: g_variant_get_string(value, nil))
        }
        return result
    }

    /// The object-path children (type `o`) of a tuple variant, in order.
    static func objectPaths(inTuple tuple: OpaquePointer) -> [String] {
        (0..<Int(g_variant_n_children(tuple))).compactMap { index in
            let child = g_variant_get_child_value(tuple, gsize(index))
            defer { g_variant_unref(child) }
            guard g_variant_is_of_type(child, g_variant_type_checked_("o")) != 0 else { return nil }
            return String(cString: g_variant_get_string(child, nil))
        }
    }

    /// The bytes of a Secret Service `Secret` struct `(oayays)` sent over a plain session.
    static func plainSecret(in encoded: OpaquePointer) -> KeyringSecret {
        let value = g_variant_get_child_value(encoded, 2)
        defer { g_variant_unref(value) }
        var length: gsize = 0
        let bytes = g_variant_get_fixed_array(value, &length, 1)
        return KeyringSecret(copying: UnsafeRawBufferPointer(start: bytes, count: Int(length)))
    }

    /// A byte-array (`ay`) variant holding a copy of `bytes`.
    static func byteArray(_ bytes: UnsafeRawBufferPointer) -> OpaquePointer {
        let byte = g_variant_type_new("y")
        defer { g_variant_type_free(byte) }
        return g_variant_new_fixed_array(byte, bytes.baseAddress, gsize(bytes.count), 1)
    }

    /// A `{sv}` dictionary entry.
    static func propertyEntry(_ name: String, _ value: OpaquePointer?) -> OpaquePointer? {
        g_variant_new_dict_entry(g_variant_new_string(name), g_variant_new_variant(value))
    }

    /// The object paths in the `ao` child at `index` of a tuple variant.
    static func objectPaths(in tuple: OpaquePointer, at index: Int) -> [String] {
        let array = g_variant_get_child_value(tuple, gsize(index))!
        defer { g_variant_unref(array) }
        return objectPaths(inArray: array)
    }

    /// The object paths in an `ao` variant.
    static func objectPaths(inArray array: OpaquePointer) -> [String] {
        (0..<Int(g_variant_n_children(array))).map { child in
            let path = g_variant_get_child_value(array, gsize(child))
            defer { g_variant_unref(path) }
            return String(cString: g_variant_get_string(path, nil))
        }
    }

    /// An `ao` variant of `paths`.
    static func objectPathArray(_ paths: [String]) -> OpaquePointer {
        let pathType = g_variant_type_new("o")
        defer { g_variant_type_free(pathType) }
        var children: [OpaquePointer?] = paths.map { g_variant_new_object_path($0) }
        return g_variant_new_array(pathType, &children, gsize(children.count))
    }

    /// A floating-free `a{ss}` variant of `attributes`; unref it when done.
    static func attributesVariant(_ attributes: [String: String]) -> OpaquePointer {
        let entryType = g_variant_type_new("{ss}")
        defer { g_variant_type_free(entryType) }
        var entries: [OpaquePointer?] = attributes.sorted { $0.key < $1.key }.map { key, value in
            g_variant_new_dict_entry(g_variant_new_string(key), g_variant_new_string(value))
        }
        return g_variant_ref_sink(g_variant_new_array(entryType, &entries, gsize(entries.count)))
    }
}
