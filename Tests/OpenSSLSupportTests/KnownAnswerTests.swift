import DeviceIdTestSupport
import Foundation
import OpenSSLSupport
import Testing

@Suite("OpenSSL's primitives, as the library calls them, give the published answers")
struct KnownAnswerTests {
    @Test("SHA-256, SHA-1 and HMAC-SHA-256: FIPS 180-2's \"abc\" and RFC 4231's second case")
    func digests() throws {
        #expect(Data(Digest.sha256(Data("abc".utf8))) == hexData("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(Data(try Digest.sha1(Data("abc".utf8))) == hexData("a9993e364706816aba3e25717850c26c9cd0d89d"))
        #expect(Data(Digest.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8)))
                == hexData("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    @Test("AES-256-GCM: the GCM specification's cases 13 and 14 seal and open; a flipped tag opens to nothing, the output wiped")
    func aesGCM() throws {
        let key = [UInt8](repeating: 0, count: AES256GCM.keySize), nonce = [UInt8](repeating: 0, count: AES256GCM.nonceSize)
        for (input, sealed) in [
            ([], "530f8afbc74536b9a963b4f1c4cb738b"),
            ([UInt8](repeating: 0, count: 16), "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919"),
        ] as [([UInt8], String)] {
            var output = [UInt8](repeating: 0, count: input.count + AES256GCM.tagSize)
            try input.withUnsafeBytes { input in
                try key.withUnsafeBytes { key in
                    try output.withUnsafeMutableBytes { try AES256GCM.seal(input, key: key, nonce: nonce, aad: [], into: $0) }
                }
            }
            #expect(Data(output) == hexData(sealed))
            for flip in [false, true] {
                var received = output
                if flip { received[received.count - 1] ^= 1 }
                var opened = [UInt8](repeating: 0xAA, count: input.count)
                let authentic = try received.withUnsafeBytes { received in
                    try key.withUnsafeBytes { key in
                        try opened.withUnsafeMutableBytes { try AES256GCM.open(received, key: key, nonce: nonce, aad: [], into: $0) }
                    }
                }
                #expect(authentic == !flip)
                #expect(opened == (flip ? [UInt8](repeating: 0, count: input.count) : input))
            }
        }
    }

    @Test("scrypt: RFC 7914's third vector (\"password\", \"NaCl\", N = 1024, r = 8, p = 16)")
    func scrypt() throws {
        var key = [UInt8](repeating: 0, count: 64)
        try Array("password".utf8).withUnsafeBytes { passphrase in
            try key.withUnsafeMutableBytes {
                try Scrypt.derive(passphrase, salt: Array("NaCl".utf8), log2N: 10, r: 8, p: 16, maximumMemory: 32 << 20, into: $0)
            }
        }
        #expect(Data(key) == hexData("fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"))
    }
}

