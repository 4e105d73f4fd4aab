"""`arena server`: the competition server. Authors with API tokens submit bots over a JSON API;
each submission is unpacked (arena/uploads.py), registered, checked in a bounded worker pool and,
when clean, picked up by a running ladder. The read-only web app of `arena serve` is mounted as is.
"""
