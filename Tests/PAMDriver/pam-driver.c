/* pam-driver: a small PAM application for pam_keygate.so's tests, in C so that the
   Swift runtime inside the module is the only one in the process (as in sshd or
   login). It runs one PAM transaction from a service file in a given folder
   (pam_start_confdir) and performs the steps named on the command line, printing
   "<step> <status>" after each:
     auth   pam_authenticate      open   pam_open_session     close  pam_close_session
     passwd pam_chauthtok         wait   read one line from stdin (or EOF) first
     env    print the PAM environment (what a login hands the session), one
            "pam-env: NAME=VALUE" line each
     groups initgroups(3) for the user, as login(1) and sshd do before the session opens
            (the process's groups become the user's; its uid stays as it is)
     dumpable  the process's dumpable flag (prctl PR_GET_DUMPABLE) as the status
   Messages the modules send (PAM_TEXT_INFO, PAM_ERROR_MSG) are printed as
   "pam-info: TEXT" or "pam-message: TEXT" lines.
   Passwords come from the environment: PAM_DRIVER_PASSWORD answers every hidden
   prompt, except prompts about a new password, which get PAM_DRIVER_NEW_PASSWORD.
   With --ruid UID the real uid becomes UID (effective uid stays root), as when a
   user runs the setuid passwd.
   usage: pam-driver [--ruid UID] CONFDIR SERVICE USER STEP... */
#define _GNU_SOURCE
#include <security/pam_appl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static int converse(int n, const struct pam_message **msg, struct pam_response **resp, void *data) {
    (void)data;
    struct pam_response *r = calloc((size_t)n, sizeof *r);
    if (r == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < n; i++) {
        const char *text = msg[i]->msg ? msg[i]->msg : "";
        if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF) {
            int wantsNew = strstr(text, "New") || strstr(text, "new");
            const char *answer = getenv(wantsNew ? "PAM_DRIVER_NEW_PASSWORD" : "PAM_DRIVER_PASSWORD");
            r[i].resp = strdup(answer ? answer : "");
        } else if (msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
            r[i].resp = strdup("");
        } else {
            /* On stdout, for the test to read: what the person at the screen would see. */
            printf("pam-%s: %s\n", msg[i]->msg_style == PAM_TEXT_INFO ? "info" : "message", text);
            fflush(stdout);
        }
    }
    *resp = r;
    return PAM_SUCCESS;
}

int main(int argc, char **argv) {
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--ruid") == 0) {
        uid_t ruid = (uid_t)strtoul(argv[2], NULL, 10);
        if (setresuid(ruid, 0, 0) != 0) { perror("setresuid"); return 2; }
        first = 3;
    }
    if (argc - first < 3) {
        fprintf(stderr, "usage: pam-driver [--ruid UID] CONFDIR SERVICE USER STEP...\n");
        return 2;
    }
    struct pam_conv conv = { converse, NULL };
    pam_handle_t *h = NULL;
    int status = pam_start_confdir(argv[first + 1], argv[first + 2], &conv, argv[first], &h);
    printf("start %d\n", status);
    fflush(stdout);
    if (status != PAM_SUCCESS) return 1;
    for (int i = first + 3; i < argc; i++) {
        const char *step = argv[i];
        if (strcmp(step, "auth") == 0) status = pam_authenticate(h, 0);
        else if (strcmp(step, "open") == 0) status = pam_open_session(h, 0);
        else if (strcmp(step, "close") == 0) status = pam_close_session(h, 0);
        else if (strcmp(step, "passwd") == 0) status = pam_chauthtok(h, 0);
        else if (strcmp(step, "groups") == 0) {
            struct passwd *pw = getpwnam(argv[first + 2]);
            status = pw != NULL && initgroups(argv[first + 2], pw->pw_gid) == 0 ? 0 : -3;
        }
        else if (strcmp(step, "dumpable") == 0) status = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        else if (strncmp(step, "tty=", 4) == 0) status = pam_set_item(h, PAM_TTY, step + 4);
        else if (strcmp(step, "env") == 0) {
            char **list = pam_getenvlist(h);
            status = list ? PAM_SUCCESS : PAM_BUF_ERR;
            for (char **entry = list; entry && *entry; entry++) {
                printf("pam-env: %s\n", *entry);
                free(*entry);
            }
            free(list);
        }
        else if (strcmp(step, "wait") == 0) {
            char line[64];
            status = fgets(line, sizeof line, stdin) ? 0 : -1;
        } else { fprintf(stderr, "unknown step %s\n", step); status = -2; }
        printf("%s %d\n", step, status);
        fflush(stdout);
    }
    pam_end(h, status > 0 ? status : PAM_SUCCESS);
    return 0;
}
