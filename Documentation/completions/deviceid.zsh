#compdef deviceid

__deviceid_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__deviceid_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __deviceid_complete "${completions[@]:0:-1}"
    fi
}

__deviceid_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_deviceid() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'id:Print the identity'\''s id, creating the identity on first use.'
            'regenerate:Replace the identity (and any legacy identifier) with a new one for good, and print its id.'
            'uuid:Print the UUID identifier: the SHA-256 of a random UUID kept in the keyring, as Ping'\''s UUID identifier.'
            'app-id:Print the app-specific machine ID for APPID (as `systemd-id128 machine-id --app-specific=APPID`).'
            'public-key:Print the identity'\''s public key (SPKI PEM, the bytes the id hashes as hex, or JWK).'
            'sign:Sign standard input with the device key; print the signature as base64url.'
            'token:Print a device token for TEAM'\''s backend: a compact JWS signed by the device key, valid ten minutes.'
            'activate-credential:Release a credential a verifier sealed to this machine'\''s TPM; print it as base64 for the verifier.'
            'info:Print the identity as one JSON object.'
            'delete:Delete the identity (and any legacy identifier) for good; with --all, every item swift-deviceid keeps in the group.'
            'doctor:Explain whether the identity can be read or created here, and what to fix when it cannot.'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        id|regenerate|uuid|app-id|public-key|sign|token|activate-credential|info|delete|doctor|help)
            "_deviceid_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_deviceid_id() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--json[Print a JSON object instead of plain text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_regenerate() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--json[Print a JSON object instead of plain text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_uuid() {
    local -i ret=1
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--json[Print a JSON object instead of plain text.]'
        '--raw[Print the UUID itself rather than its SHA-256.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_app-id() {
    local -i ret=1
    local -ar arg_specs=(
        ':application-id:'
        '--uuid[Print it in UUID form.]'
        '--json[Print a JSON object instead of plain text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_public-key() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar ___format=('pem' 'der-hex' 'jwk')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--create[Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).]'
        '--json[Print a JSON object instead of plain text.]'
        '--format[pem, der-hex (the bytes the id hashes\: PKCS#1 DER for RSA, the X9.63 point for P-256) or jwk.]:format:{__deviceid_complete "${___format[@]}"}'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_sign() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar ___algorithm=('RS256' 'PS256' 'ES256')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--create[Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).]'
        '--json[Print a JSON object instead of plain text.]'
        '--algorithm[RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default\: RS256 or ES256, by the key)]:algorithm:{__deviceid_complete "${___algorithm[@]}"}'
        '--der[Write an ES256 signature as DER rather than raw r‖s.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_token() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar ___algorithm=('RS256' 'PS256' 'ES256')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--json[Print a JSON object instead of plain text.]'
        '--team[The team the token is for (its `aud`).]:team:'
        '--algorithm[RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default\: RS256 or ES256, by the key)]:algorithm:{__deviceid_complete "${___algorithm[@]}"}'
        '--attestation-key[The verifying server'\''s attestation key (base64url; deviceid-server answers it at GET /v1/tpm/attestation_key)\: with a key in the TPM, the TPM'\''s attestation is sealed to it, so the backend that relays the token cannot read it. Without it the token carries none.]:attestation-key:'
        '--no-tpm-attestation[With a key in the TPM, leave out the TPM'\''s attestation (and the endorsement certificate that names the TPM).]'
        '--require-attestation[Fail, saying why, unless the token carries the TPM'\''s attestation of its key (by default a TPM that cannot attest is only warned about).]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_activate-credential() {
    local -i ret=1
    local -ar arg_specs=(
        '--json[Print a JSON object instead of plain text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_info() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--create[Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).]'
        '--json[Accepted for uniformity\: `info` always prints JSON.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_delete() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--json[Print a JSON object instead of plain text.]'
        '--all[Also remove the group'\''s UUID identifier and encryption key (values other programs sealed with it become unreadable).]'
        '--force[With --all\: remove without asking, for scripts.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_doctor() {
    local -i ret=1
    local -ar ___key_type=('rsa' 'p256')
    local -ar ___key_size=('2048' '3072' '4096')
    local -ar ___key_protection=('keyring' 'tpm')
    local -ar arg_specs=(
        '--access-group[The access group (keyring `service` attribute) programs share the identity through. (default\: $DEVICEID_ACCESS_GROUP, else `deviceid`)]:access-group:'
        '--non-interactive[Never show an unlock prompt\: a locked keyring is an error at once.]'
        '--timeout[Give up after this many seconds, for the whole command (lock waits and prompts included).]:timeout:'
        '--account[The keyring account of the identity. (default\: swift-deviceid.device-identifier)]:account:'
        '--key-type[The key type of a new identity\: rsa or p256. (default\: rsa)]:key-type:{__deviceid_complete "${___key_type[@]}"}'
        '--key-size[RSA key size for a new identity\: 2048, 3072 or 4096. (default\: 2048)]:key-size:{__deviceid_complete "${___key_size[@]}"}'
        '--key-protection[Where a new identity'\''s private key lives\: keyring, or tpm (generated in the TPM 2.0, never exportable; P-256 unless --key-type rsa, which is 2048 bits then). (default\: keyring)]:key-protection:{__deviceid_complete "${___key_protection[@]}"}'
        '--high-security[4096-bit key, under its own account (the library'\''s .highSecurity).]'
        '--no-encryption[The identity is stored unencrypted (the keyring'\''s own protection only).]'
        '--json[Print a JSON object instead of plain text.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_deviceid_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _deviceid ]]; then
    _deviceid "${@}"
else
    compdef _deviceid deviceid
fi
