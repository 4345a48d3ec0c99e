function __deviceid_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __deviceid_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __deviceid_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __deviceid_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __deviceid_parse_tokens -S
    set -l unparsed_tokens (__deviceid_tokens -pc)
    switch $unparsed_tokens[1]
    case 'deviceid'
        __deviceid_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'id'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'json' 'version' 'h/help'
        case 'regenerate'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'json' 'version' 'h/help'
        case 'uuid'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'json' 'raw' 'version' 'h/help'
        case 'app-id'
            __deviceid_parse_subcommand 1 'uuid' 'json' 'version' 'h/help'
        case 'public-key'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'create' 'json' 'format=' 'version' 'h/help'
        case 'sign'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'create' 'json' 'algorithm=' 'der' 'version' 'h/help'
        case 'token'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'json' 'team=' 'algorithm=' 'attestation-key=' 'no-tpm-attestation' 'require-attestation' 'version' 'h/help'
        case 'activate-credential'
            __deviceid_parse_subcommand 0 'json' 'version' 'h/help'
        case 'info'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'create' 'json' 'version' 'h/help'
        case 'delete'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'json' 'all' 'force' 'version' 'h/help'
        case 'doctor'
            __deviceid_parse_subcommand 0 'access-group=' 'non-interactive' 'timeout=' 'account=' 'key-type=' 'key-size=' 'key-protection=' 'high-security' 'no-encryption' 'json' 'version' 'h/help'
        case 'help'
            __deviceid_parse_subcommand -r 1 'version'
        end
    end
end

function __deviceid_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __deviceid_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __deviceid_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __deviceid_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__deviceid_tokens -p)
    if test -z "$(__deviceid_tokens -t)"
        set -l index (count (__deviceid_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'deviceid' -f
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'id' -d 'Print the identity\'s id, creating the identity on first use.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'regenerate' -d 'Replace the identity (and any legacy identifier) with a new one for good, and print its id.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'uuid' -d 'Print the UUID identifier: the SHA-256 of a random UUID kept in the keyring, as Ping\'s UUID identifier.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'app-id' -d 'Print the app-specific machine ID for APPID (as `systemd-id128 machine-id --app-specific=APPID`).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'public-key' -d 'Print the identity\'s public key (SPKI PEM, the bytes the id hashes as hex, or JWK).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'sign' -d 'Sign standard input with the device key; print the signature as base64url.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'token' -d 'Print a device token for TEAM\'s backend: a compact JWS signed by the device key, valid ten minutes.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'activate-credential' -d 'Release a credential a verifier sealed to this machine\'s TPM; print it as base64 for the verifier.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'info' -d 'Print the identity as one JSON object.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'delete' -d 'Delete the identity (and any legacy identifier) for good; with --all, every item swift-deviceid keeps in the group.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'doctor' -d 'Explain whether the identity can be read or created here, and what to fix when it cannot.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_positional "deviceid" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid id" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid regenerate" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" raw' -l 'raw' -d 'Print the UUID itself rather than its SHA-256.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid uuid" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid app-id" uuid' -l 'uuid' -d 'Print it in UUID form.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid app-id" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid app-id" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid app-id" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" create' -l 'create' -d 'Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" format' -l 'format' -d 'pem, der-hex (the bytes the id hashes: PKCS#1 DER for RSA, the X9.63 point for P-256) or jwk.' -rfka 'pem der-hex jwk'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid public-key" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" create' -l 'create' -d 'Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" algorithm' -l 'algorithm' -d 'RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default: RS256 or ES256, by the key)' -rfka 'RS256 PS256 ES256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" der' -l 'der' -d 'Write an ES256 signature as DER rather than raw r‖s.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid sign" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" team' -l 'team' -d 'The team the token is for (its `aud`).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" algorithm' -l 'algorithm' -d 'RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default: RS256 or ES256, by the key)' -rfka 'RS256 PS256 ES256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" attestation-key' -l 'attestation-key' -d 'The verifying server\'s attestation key (base64url; deviceid-server answers it at GET /v1/tpm/attestation_key): with a key in the TPM, the TPM\'s attestation is sealed to it, so the backend that relays the token cannot read it. Without it the token carries none.' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" no-tpm-attestation' -l 'no-tpm-attestation' -d 'With a key in the TPM, leave out the TPM\'s attestation (and the endorsement certificate that names the TPM).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" require-attestation' -l 'require-attestation' -d 'Fail, saying why, unless the token carries the TPM\'s attestation of its key (by default a TPM that cannot attest is only warned about).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid token" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid activate-credential" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid activate-credential" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid activate-credential" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" create' -l 'create' -d 'Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" json' -l 'json' -d 'Accepted for uniformity: `info` always prints JSON.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid info" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" all' -l 'all' -d 'Also remove the group\'s UUID identifier and encryption key (values other programs sealed with it become unreadable).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" force' -l 'force' -d 'With --all: remove without asking, for scripts.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid delete" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" access-group' -l 'access-group' -d 'The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" non-interactive' -l 'non-interactive' -d 'Never show an unlock prompt: a locked keyring is an error at once.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" timeout' -l 'timeout' -d 'Give up after this many seconds, for the whole command (lock waits and prompts included).' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" account' -l 'account' -d 'The keyring account of the identity. (default: swift-deviceid.device-identifier)' -rfka ''
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" key-type' -l 'key-type' -d 'The key type of a new identity: rsa or p256. (default: rsa)' -rfka 'rsa p256'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" key-size' -l 'key-size' -d 'RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)' -rfka '2048 3072 4096'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" key-protection' -l 'key-protection' -d 'Where a new identity\'s private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)' -rfka 'keyring tpm'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" high-security' -l 'high-security' -d '4096-bit key, under its own account (the library\'s .highSecurity).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" no-encryption' -l 'no-encryption' -d 'The identity is stored unencrypted (the keyring\'s own protection only).'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" json' -l 'json' -d 'Print a JSON object instead of plain text.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" version' -l 'version' -d 'Show the version.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid doctor" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'deviceid' -n '__deviceid_should_offer_completions_for_flags_or_options "deviceid help" version' -l 'version' -d 'Show the version.'
