/* The mark that auth unlocked the keychain, kept on the PAM handle (pam_set_data): the uid
   the helper named in its "unlocked UID" line. open_session in the same transaction (login,
   su, a display manager; not sshd, whose keyboard-interactive auth runs in another process)
   then needs no child to look in the user's keyring (UnlockedAtAuth.swift). */
#ifndef KEYGATE_AUTH_MARK_H
#define KEYGATE_AUTH_MARK_H
#include <stdlib.h>
#include <security/pam_modules.h>

#define KEYGATE_AUTH_MARK "keygate_unlocked_at_auth"

static void keygate_free_mark(pam_handle_t *pamh, void *data, int status) {
    (void)pamh;
    (void)status;
    free(data);
}

/* Keeps `uid` as the mark (replacing an earlier one); 0 on success. */
static inline int keygate_set_auth_mark(pam_handle_t *pamh, unsigned int uid) {
    unsigned int *copy = malloc(sizeof *copy);
    if (copy == NULL) return -1;
    *copy = uid;
    if (pam_set_data(pamh, KEYGATE_AUTH_MARK, copy, keygate_free_mark) != PAM_SUCCESS) {
        free(copy);
        return -1;
    }
    return 0;
}

/* Whether the mark names `uid`; the mark is used up either way (a second open_session in the
   same transaction looks in the keyring again). */
static inline int keygate_take_auth_mark(pam_handle_t *pamh, unsigned int uid) {
    const void *data = NULL;
    if (pam_get_data(pamh, KEYGATE_AUTH_MARK, &data) != PAM_SUCCESS || data == NULL) return 0;
    int same = *(const unsigned int *)data == uid;
    (void)pam_set_data(pamh, KEYGATE_AUTH_MARK, NULL, NULL);
    return same;
}
#endif
