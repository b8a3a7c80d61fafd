# fish completion for keygate(1): verbs, each verb's options, and the services and
# accounts of existing items (from `keygate list --json`: attributes only, never
# secrets, never a prompt). Plain shell tools, no jq.
# Install: /usr/share/fish/vendor_completions.d/keygate.fish

set -l verbs init add add-generic-password add-internet-password get find-generic-password find-internet-password delete delete-generic-password delete-internet-password list dump-keychain exists unlock unlock-keychain lock lock-keychain validate list-keychains default-keychain show-keychain-info status passwd setup-host forget-user policy doctor exec migrate search lookup store clear git-credential docker-credential ssh-add ssh-askpass help
set -l item_verbs add add-generic-password add-internet-password get find-generic-password find-internet-password delete delete-generic-password delete-internet-password list exists

function __keygate_field_values -a field
    set -l extra $argv[2..-1]
    keygate list --all-classes --json $extra </dev/null 2>/dev/null | tr '{' '\n' \
        | sed -n "s/.*\"$field\":\"\\([^\"\\\\]*\\)\".*/\\1/p" | sort -u
end

function __keygate_services
    __keygate_field_values service
    __keygate_field_values server
end

function __keygate_accounts
    set -l tokens (commandline -opc)
    set -l svc
    for i in (seq (count $tokens))
        if contains -- $tokens[$i] -s --service; and test $i -lt (count $tokens)
            set svc -s $tokens[(math $i + 1)]
        end
    end
    __keygate_field_values account $svc
end

complete -c keygate -f
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -l version -d 'Print the version'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -s v -d 'Validate, like sudo -v'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -s h -l help -d 'Show help'
complete -c keygate -l askpass -r -a '(__fish_complete_command)' -d 'Askpass program'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -l pinentry -d 'Ask with your pinentry'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -l verbose -d 'Also print the audit lines on stderr'

complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a init -d 'Create your keychain'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a add -d 'Add an item (secret on stdin or a prompt)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'add-generic-password add-internet-password' -d 'Add (macOS spelling)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a get -d "Print an item's secret"
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'find-generic-password find-internet-password' -d 'Show attributes; -w the secret'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a delete -d 'Delete items'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'delete-generic-password delete-internet-password' -d 'Delete one item and print it (macOS)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a list -d 'List items (attributes only)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a dump-keychain -d 'Every item as macOS prints it; -d secrets'
complete -c keygate -n "__fish_seen_subcommand_from dump-keychain" -s d -d 'Also print secrets, after authentication'
complete -c keygate -n "__fish_seen_subcommand_from find-generic-password find-internet-password" -s g -d 'Also the password on stderr'
complete -c keygate -n "__fish_seen_subcommand_from find-generic-password find-internet-password" -s l -l label -r -d 'Match the label'
complete -c keygate -n "__fish_seen_subcommand_from find-generic-password find-internet-password" -s D -l kind -r -d 'Match the kind'
complete -c keygate -n "__fish_seen_subcommand_from find-generic-password find-internet-password" -s G -l generic -r -d 'Match the generic attribute'
complete -c keygate -n "__fish_seen_subcommand_from find-generic-password find-internet-password" -s c -l creator -r -d 'Match the creator code'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'list-keychains default-keychain' -d 'Print your keychain (macOS)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a show-keychain-info -d 'The lock timeout, as macOS prints it'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a forget-user -d 'After userdel, remove the gatekeeper state of a uid (root)'
complete -c keygate -n "__fish_seen_subcommand_from forget-user" -l removing -d 'The account is being removed'
complete -c keygate -n "__fish_seen_subcommand_from list-keychains default-keychain" -s d -l domain -r -a 'user system common dynamic' -d 'Domain'
complete -c keygate -n "__fish_seen_subcommand_from list-keychains default-keychain" -s s -l set -d 'Set the list: only your keychain'
complete -c keygate -n "__fish_seen_subcommand_from lock-keychain lock" -s a -d 'Also the after-first-unlock key'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a exists -d 'Exit 0 if the item exists, 44 if not'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'unlock unlock-keychain' -d 'Unlock the keychain now'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a 'lock lock-keychain' -d 'Lock (like sudo -k)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a validate -d 'Extend or open the window gated items read in without asking (like sudo -v)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a search -d 'Items whose attributes match (secret-tool)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a lookup -d 'Print the matching secret (secret-tool)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a store -d 'Store a secret from stdin (secret-tool)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a clear -d 'Delete matching items (secret-tool)'
complete -c keygate -n "__fish_seen_subcommand_from search lookup store clear" -l attr -x -a 'service= account= server= protocol= port= path= security-domain= authentication-type= label= comment=' -d 'Attribute NAME=VALUE'
complete -c keygate -n "__fish_seen_subcommand_from search" -l json -d 'JSON array'
complete -c keygate -n "__fish_seen_subcommand_from search" -l all -d 'Every match (secret-tool)'
complete -c keygate -n "__fish_seen_subcommand_from search" -l unlock -d 'Accepted (secret-tool)'
complete -c keygate -n "__fish_seen_subcommand_from store" -l label -x -d 'Label'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a status -d "Show the keychain's state"
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a passwd -d 'Re-wrap after a password change'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a setup-host -d 'Create the host key (root)'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a policy -d 'Check, explain and list policy files'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a doctor -d 'Check the setup and say how to fix it'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a exec -d 'Run a command with secrets injected'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a help -d 'Help for a verb'
complete -c keygate -n "__fish_seen_subcommand_from help" -a "$verbs"

# Item options.
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs policy exec" -s s -l service -x -a '(__keygate_services)' -d 'Service or server'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs policy exec" -s a -l account -x -a '(__keygate_accounts)' -d 'Account'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -l internet -d 'Internet passwords'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -s r -l protocol -x -a 'https http ssh ftp ftps smtp imap imaps pop3 ldap ldaps smb' -d 'Protocol'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -s P -l port -x -d 'Port'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -s p -l path -x -d 'Path'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -s d -l security-domain -x -d 'Security domain'
complete -c keygate -n "__fish_seen_subcommand_from $item_verbs" -s t -l auth-type -x -a 'default http-basic http-digest form ntlm' -d 'Authentication type'

# add
set -l add_verbs add add-generic-password add-internet-password
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -s l -l label -x -d 'Label'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -s j -l comment -x -d 'Comment'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -l attr -x -d 'An attribute of your own, NAME=VALUE'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -s U -l update -d 'Replace an existing item'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -l accessible -x -a 'when-unlocked after-first-unlock when-passcode-set-this-device-only when-unlocked-this-device-only after-first-unlock-this-device-only' -d 'Accessibility class'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -l access -x -a 'user-presence device-passcode biometry-any biometry-current-set current-set none' -d 'Authentication to read'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -l or -d 'Any constraint is enough'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs" -l and -d 'Every constraint is needed'
complete -c keygate -n "__fish_seen_subcommand_from $add_verbs find-generic-password find-internet-password" -s w -d 'Prompt for / print the secret'

# the other verbs
complete -c keygate -n "__fish_seen_subcommand_from delete lock lock-keychain" -l all -d 'Every matching item / every key'
complete -c keygate -n "__fish_seen_subcommand_from list" -l json -d 'JSON array'
complete -c keygate -n "__fish_seen_subcommand_from list" -l all-classes -d 'Generic and internet together'
complete -c keygate -n "__fish_seen_subcommand_from status doctor" -l json -d 'JSON output'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a migrate -d 'Move items between the Secret Service and the embedded store'
complete -c keygate -n "__fish_seen_subcommand_from migrate" -l to -x -a 'secret-service embedded' -d 'Destination store'
complete -c keygate -n "__fish_seen_subcommand_from migrate" -l delete-source -d 'Delete each source item once its copy is verified'
complete -c keygate -n "__fish_seen_subcommand_from unlock unlock-keychain passwd" -l recovery -d 'Use the recovery key'
complete -c keygate -n "__fish_seen_subcommand_from init unlock unlock-keychain" -l host-protector -d '(root) the host protector of a service account'
complete -c keygate -n "__fish_seen_subcommand_from init unlock unlock-keychain" -l user -x -a '(__fish_complete_users)' -d '(root) the account'
complete -c keygate -n "__fish_seen_subcommand_from passwd delete migrate" -s y -l yes -d 'Go ahead without asking'
complete -c keygate -n "__fish_seen_subcommand_from setup-host" -l rotate -d 'Replace the host key'
complete -c keygate -n "__fish_seen_subcommand_from setup-host" -l tpm -d 'Seal the host key to the TPM2'
complete -c keygate -n "__fish_seen_subcommand_from setup-host" -l tcti -r -d 'The TPM, as a tpm2-tss TCTI'
complete -c keygate -n "__fish_seen_subcommand_from policy; and not __fish_seen_subcommand_from check explain list" -a 'check explain list'
complete -c keygate -n "__fish_seen_subcommand_from policy; and __fish_seen_subcommand_from check" -F

# credential helpers
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a git-credential -d 'git credential helper (git-credential-keygate)'
complete -c keygate -n "__fish_seen_subcommand_from git-credential" -x -a 'get store erase'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a docker-credential -d 'docker credential helper (docker-credential-keygate)'
complete -c keygate -n "__fish_seen_subcommand_from docker-credential" -x -a 'store get erase list version'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a ssh-add -d 'Store an SSH key passphrase for keygate-ssh-askpass'
complete -c keygate -n "__fish_seen_subcommand_from ssh-add" -l no-presence -d 'No presence check to read it back'
complete -c keygate -n "__fish_seen_subcommand_from ssh-add" -s U -l update -d 'Replace a stored passphrase'
complete -c keygate -n "not __fish_seen_subcommand_from $verbs" -a ssh-askpass -d 'SSH_ASKPASS for ssh-add (keygate-ssh-askpass)'

# exec
complete -c keygate -n "__fish_seen_subcommand_from exec" -l env -x -d 'Put the secret in the environment as NAME'
complete -c keygate -n "__fish_seen_subcommand_from exec" -l stdin -d 'Give the secret on standard input'
complete -c keygate -n "__fish_seen_subcommand_from exec" -l fd -x -d 'Give the secret on a pipe at descriptor N (3-99)'
