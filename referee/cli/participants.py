"""``taki-referee participants add|list|disable|enable``: the competition's participants, in
its database (the server need not run; a running server sees the change at once)."""

from __future__ import annotations

import argparse

from referee.competition import CompetitionStore


def participants_command(args: argparse.Namespace) -> int:
    with CompetitionStore(args.db) as store:
        if args.participants_command == "add":
            token = store.add_participant(args.name)
            print(f"participant {args.name} added; their token, shown only now"
                  " (send it as 'Authorization: Bearer TOKEN', or"
                  " 'taki-referee submit URL --token TOKEN PATH'):")
            print(token)
        elif args.participants_command == "list":
            subs = store.submissions()
            for person in store.participants():
                active = [s.entrant for s in subs
                          if s.participant == person.name and s.status == "active"]
                state = "disabled" if person.disabled else "active"
                bots = ", ".join(b for b in active if b) or "no active bot"
                print(f"{person.name}\t{state}\tsince {person.created_at}\t{bots}")
        elif args.participants_command == "enable":
            back = store.enable_participant(args.name)
            again = f"; back in the ladder: {', '.join(back)}" if back else ""
            print(f"participant {args.name} enabled: their token works again{again}")
        else:
            retired = store.disable_participant(args.name)
            left = f"; retired: {', '.join(retired)}" if retired else ""
            print(f"participant {args.name} disabled{left}")
    return 0
