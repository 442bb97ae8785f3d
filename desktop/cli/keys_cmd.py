"""`nanobot-tray keys`: store, list and delete API keys in the OS keyring."""

from __future__ import annotations

import argparse
import getpass
import sys

from desktop.kernel import secrets


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("keys", help="manage API keys in the OS keyring")
    keys = parser.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    p = keys.add_parser("set", help="store a key (prompted without echo, or read from stdin)")
    p.add_argument("provider", help="provider name as litellm spells it, e.g. openai, anthropic, openrouter")
    keys.add_parser("list", help="list providers that have a stored key (names only)")
    p = keys.add_parser("delete", help="delete a stored key")
    p.add_argument("provider", help="the provider's name, as `nanobot-tray keys list` shows it")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.keys_command == "set":
            if sys.stdin.isatty():
                try:
                    secret = getpass.getpass(f"API key for {args.provider} (input hidden): ")
                except EOFError:  # Ctrl+D at the prompt: the person changed their mind
                    print(file=sys.stderr)
                    secret = ""
            else:
                secret = sys.stdin.readline()
            if not secret.strip():
                print("error: no key was given; nothing was stored (paste it at the prompt, or give it on standard "
                      "input)", file=sys.stderr)
                return 2
            secrets.set_key(args.provider, secret.strip())
            print(f"Stored the {args.provider} key in the keyring ({secrets.backend_name()}).")
            if args.provider != args.provider.lower():  # names are exact: an MCP server's keyring:NAME may be any
                print(f"Note: model calls look for a provider's key under its name in lower case; for the "
                      f"{args.provider.lower()} models store it with `nanobot-tray keys set {args.provider.lower()}`.",
                      file=sys.stderr)
            if secrets.is_plaintext_backend():
                print("Warning: this keyring backend stores keys in a plain file.", file=sys.stderr)
        elif args.keys_command == "list":
            names = secrets.list_providers()
            print("\n".join(names) if names else "No keys stored.")
        else:
            if secrets.delete_key(args.provider):
                print(f"Deleted the {args.provider} key.")
            else:
                print(f"No key stored for {args.provider}.", file=sys.stderr)
                return 1
    except secrets.KeyringUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
