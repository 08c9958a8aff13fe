"""Pure render helpers: functions from snapshots to lines and table rows.

Nothing here builds a widget. Views call these and put the result on
screen, so everything a pane shows can be unit-tested on hand-built
snapshots.
"""
