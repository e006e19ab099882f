#!/bin/sh
# process.sh -- a credential_process for tests/unit/test_credentials.c: prints
# credentials JSON (fake keys) or misbehaves, as $1 says. Run as
# "/bin/sh process.sh MODE", so it needs no executable bit.
mode="$1"
n=1
if [ -n "$TT_CP_COUNTER" ]; then
  if [ -f "$TT_CP_COUNTER" ]; then
    read -r prev < "$TT_CP_COUNTER"
    n=$((prev + 1))
  fi
  echo "$n" > "$TT_CP_COUNTER"
fi
case "$mode" in
  ok)
    printf '{"Version": 1, "AccessKeyId": "AKIDPROC%d", "SecretAccessKey": "SECRETPROC%d", "SessionToken": "TOKENPROC%d", "Expiration": "%s"}\n' \
      "$n" "$n" "$n" "${TT_CP_EXPIRATION:-2030-01-01T00:00:00Z}" ;;
  noexp)
    printf '{"Version": 1, "AccessKeyId": "AKIDPROCNOEXP", "SecretAccessKey": "SECRETPROCNOEXP"}\n' ;;
  v2)
    printf '{"Version": 2, "AccessKeyId": "AKIDPROCV2", "SecretAccessKey": "SECRETPROCV2"}\n' ;;
  fail)
    echo "SECRETPROCFAIL must not reach any message" >&2
    exit 3 ;;
  sleep)
    exec sleep 3600 ;; # only a kill ends it
  big)
    i=0
    while [ $i -lt 3000 ]; do
      printf '%s' "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
      i=$((i + 1))
    done ;;
  args)
    [ "$2" = "two words" ] && [ "$3" = "x" ] || exit 9
    printf '{"Version": 1, "AccessKeyId": "AKIDPROCARGS", "SecretAccessKey": "SECRETPROCARGS"}\n' ;;
  *)
    exit 2 ;;
esac
