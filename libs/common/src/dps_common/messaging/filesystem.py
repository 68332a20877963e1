"""kombu's filesystem transport (``make run``: no broker to install), with messages written atomically.

kombu creates a message's file in the folder its consumers read and only then writes it. A consumer
that lists the folder in between moves the empty file away, fails to parse it and deletes it: the
message is lost, though its publisher saw no error (seen at ``make run`` start-up, when the relay
publishes a batch while the worker starts consuming). Here a message is written under a name no
consumer picks up and renamed into place when complete; a rename within one folder is atomic.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

PARTIAL_SUFFIX = ".partial"  # consumers take only names ending in ".<queue>.msg"


class Channel(filesystem.Channel):
    # kombu's filesystem Channel renames its base's ``message`` parameter: override it as it does
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        # kombu's own name: consumers take the oldest first by this millisecond prefix
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL_SUFFIX
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
