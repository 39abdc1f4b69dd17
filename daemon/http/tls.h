/* SPDX-License-Identifier: MIT */
/* tls: the certificate, key and client CA of HTTPS: read from their PEM
 * files and checked with GnuTLS (parsable, key matching certificate) so a
 * bad file is a configuration error naming the file, at start and on
 * reload, never a server that fails its first handshake.  The checked
 * credentials are kept: each new TLS session takes those of the material
 * in force, so a reload renews the certificate without dropping a
 * connection. */
#ifndef TOPDOWND_TLS_H
#define TOPDOWND_TLS_H

#include <stddef.h>

#include <gnutls/gnutls.h>

struct tls_material {
	char *cert; /* PEM text, NUL-terminated */
	char *key;
	char *ca;   /* NULL: client certificates are not requested */
	gnutls_certificate_credentials_t cred; /* certificate, key and CA */
};

/* @ca_path may be empty.  On error @err names the file and the problem. */
int tls_material_load(const char *cert_path, const char *key_path, const char *ca_path,
		      struct tls_material **ret, char *err, size_t errlen);
void tls_material_free(struct tls_material *tls);

/* The GnuTLS priority string: TLS 1.2 and 1.3 only. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

#endif
