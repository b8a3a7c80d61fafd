# bash completion for keygate(1): verbs, each verb's options, and the services
# and accounts of existing items (from `keygate list --json`: attributes only,
# never secrets, never a prompt). Plain shell tools, no jq.
# Install: /usr/share/bash-completion/completions/keygate

_keygate_verbs="init add add-generic-password add-internet-password get find-generic-password
find-internet-password delete delete-generic-password delete-internet-password list dump-keychain
exists unlock unlock-keychain lock lock-keychain validate list-keychains default-keychain show-keychain-info
status passwd setup-host forget-user policy doctor exec migrate
search lookup store clear git-credential docker-credential ssh-add ssh-askpass help"

_keygate_item_opts="-s --service -a --account --internet -r --protocol -P --port -p --path
-d --security-domain -t --auth-type --askpass -h --help"

# The options of VERB, one word each.
_keygate_verb_opts() {
    case "$1" in
        add | add-generic-password | add-internet-password)
            echo "$_keygate_item_opts -l --label -j --comment --attr -U --update --accessible --access --or --and -w" ;;
        get | exists) echo "$_keygate_item_opts" ;;
        find-generic-password | find-internet-password) echo "$_keygate_item_opts -l --label -D --kind -G --generic -c --creator -g -w" ;;
        list-keychains | default-keychain) echo "-d --domain -s --set -h --help" ;;
        show-keychain-info) echo "--askpass -h --help" ;;
        forget-user) echo "--removing -h --help" ;;
        delete) echo "$_keygate_item_opts --all --yes -y" ;;
        delete-generic-password | delete-internet-password) echo "$_keygate_item_opts" ;;
        dump-keychain) echo "-d --askpass -h --help" ;;
        search) echo "--attr --json --all --unlock --askpass -h --help" ;;
        lookup | clear) echo "--attr --askpass -h --help" ;;
        store) echo "--label --attr --askpass -h --help" ;;
        list) echo "$_keygate_item_opts --json --all-classes" ;;
        init) echo "--host-protector --user --askpass -h --help" ;;
        unlock | unlock-keychain) echo "--recovery --host-protector --user --askpass -h --help" ;;
        passwd) echo "--recovery --yes -y --askpass -h --help" ;;
        lock | lock-keychain) echo "-a --all --askpass -h --help" ;;
        validate) echo "--askpass --pinentry --verbose -h --help" ;;
        status | doctor) echo "--json --askpass -h --help" ;;
        migrate) echo "--to --delete-source --yes -y --askpass -h --help" ;;
        setup-host) echo "--rotate --tpm --tcti -h --help" ;;
        policy) echo "-s --service -a --account -h --help" ;;
        exec) echo "-s --service -a --account --env --stdin --fd --askpass -h --help" ;;
        git-credential) echo "get store erase --askpass -h --help" ;;
        docker-credential) echo "store get erase list version --askpass -h --help" ;;
        ssh-add) echo "--no-presence -U --update --askpass -h --help" ;;
        ssh-askpass) echo "--askpass -h --help" ;;
    esac
}

# Values of one field ("service" or "account") of the items `keygate list --json`
# prints, one per line, sorted and unique. Extra arguments go to `keygate list`.
# A quote inside a JSON string is escaped (\"), so the pattern "field":" can only
# match a real key.
_keygate_field_values() {
    local field=$1
    shift
    "${_keygate_cmd:-keygate}" list --all-classes --json "$@" </dev/null 2>/dev/null \
        | tr '{' '\n' \
        | sed -n "s/.*\"$field\":\"\\([^\"\\\\]*\\)\".*/\\1/p" \
        | sort -u
}

_keygate() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null 2>&1; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
    local _keygate_cmd=${words[0]}

    # The verb: the first word after the program that is not a top-level option.
    local i verb="" verb_index=0
    for ((i = 1; i < cword; i++)); do
        case "${words[i]}" in
            --askpass) ((i++)) ;;
            -*) ;;
            *) verb=${words[i]}; verb_index=$i; break ;;
        esac
    done

    if [[ -z "$verb" ]]; then
        case "$prev" in
            --askpass) COMPREPLY=($(compgen -c -- "$cur")); return ;;
        esac
        if [[ "$cur" == -* ]]; then
            COMPREPLY=($(compgen -W "--version -h --help --askpass -v" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$_keygate_verbs" -- "$cur"))
        fi
        return
    fi

    # The service given so far, to narrow account completion.
    local service=""
    for ((i = verb_index + 1; i < cword; i++)); do
        case "${words[i]}" in
            -s | --service) service=${words[i + 1]} ;;
            --service=*) service=${words[i]#--service=} ;;
        esac
    done

    case "$prev" in
        -s | --service)
            local IFS=$'\n'
            # -s is the service of a generic password or the server of an internet one.
            COMPREPLY=($(compgen -W "$(_keygate_field_values service; _keygate_field_values server)" -- "$cur"))
            return ;;
        -a | --account)
            local IFS=$'\n'
            if [[ -n "$service" ]]; then
                COMPREPLY=($(compgen -W "$(_keygate_field_values account -s "$service")" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$(_keygate_field_values account)" -- "$cur"))
            fi
            return ;;
        --to)
            COMPREPLY=($(compgen -W "secret-service embedded" -- "$cur"))
            return ;;
        --accessible)
            COMPREPLY=($(compgen -W "when-unlocked after-first-unlock when-passcode-set-this-device-only
                when-unlocked-this-device-only after-first-unlock-this-device-only" -- "$cur"))
            return ;;
        --access)
            COMPREPLY=($(compgen -W "user-presence device-passcode biometry-any biometry-current-set current-set none" -- "$cur"))
            return ;;
        -r | --protocol)
            COMPREPLY=($(compgen -W "https http ssh ftp ftps smtp imap imaps pop3 ldap ldaps smb afp telnet socks" -- "$cur"))
            return ;;
        -t | --auth-type)
            COMPREPLY=($(compgen -W "default http-basic http-digest form ntlm msn dpa rpa html-form" -- "$cur"))
            return ;;
        --askpass) COMPREPLY=($(compgen -c -- "$cur")); return ;;
        -l | --label | -j | --comment | -P | --port | -p | --path | -d | --security-domain) return ;;
    esac

    case "$verb" in
        help)
            ((cword == verb_index + 1)) && COMPREPLY=($(compgen -W "$_keygate_verbs" -- "$cur"))
            return ;;
        policy)
            if ((cword == verb_index + 1)) && [[ "$cur" != -* ]]; then
                COMPREPLY=($(compgen -W "check explain list" -- "$cur"))
                return
            fi
            if [[ "${words[verb_index + 1]}" == check && "$cur" != -* ]]; then
                COMPREPLY=($(compgen -f -X '!*.policy' -- "$cur") $(compgen -d -- "$cur"))
                return
            fi ;;
    esac
    COMPREPLY=($(compgen -W "$(_keygate_verb_opts "$verb")" -- "$cur"))
}

complete -F _keygate keygate
