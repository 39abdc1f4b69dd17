/* auth: HTTP basic authentication against a file of bcrypt hashes as
 * `htpasswd -B` writes them.
 *
 * The file and the Authorization header are parsed by pure functions.
 * Passwords are verified with crypt(3) (libxcrypt's bcrypt) and compared in
 * constant time; credentials that verified are remembered (as an HMAC under
 * a per-process random key, for a few minutes) so that a scrape every
 * second does not pay bcrypt each time.  Thread-safe. */
#ifndef TOPDOWND_AUTH_H
#define TOPDOWND_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define AUTH_REALM "topdownd"
#define AUTH_USER_MAX 256
#define AUTH_PASSWORD_MAX 256

struct auth_db;

/* Parses the file's text; problems go to @diag as NAME:LINE: message.
 * Returns 0 or -EINVAL (see @diag) or -ENOMEM. */
int auth_db_parse(const char *name, const char *text, size_t len, struct auth_db **ret,
		  struct config_diag *diag);
int auth_db_load(const char *path, struct auth_db **ret, struct config_diag *diag);
void auth_db_free(struct auth_db *db);
size_t auth_db_users(const struct auth_db *db);

/* Splits "Basic dXNlcjpwYXNz" into user and password.  -EINVAL when it is
 * not a well-formed Basic credential. */
int auth_parse_header(const char *value, char *user, size_t ulen, char *pass, size_t plen);

enum auth_result {
	AUTH_OK,
	AUTH_MISSING,   /* no Authorization header */
	AUTH_MALFORMED, /* not Basic, bad base64, no colon... */
	AUTH_DENIED,    /* unknown user or wrong password */
};

/* Checks an Authorization header value (NULL if absent).  *@bcrypt is set
 * when a bcrypt verification had to run (a cache miss). */
enum auth_result auth_check(struct auth_db *db, const char *authorization, bool *bcrypt);

#endif
