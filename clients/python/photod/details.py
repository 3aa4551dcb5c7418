"""What changed between two fetch results of the same request (PhotoKit's
``PHFetchResultChangeDetails``), computed exactly as the Swift client's ``ChangeDetails``: both are
run against the same vectors (Tests/Vectors/change-details.json), made by the Swift side."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

if TYPE_CHECKING:
    from .library import FetchResult


class Move(NamedTuple):
    """One object that changed its place relative to the others: its index before, its index after."""
    from_index: int
    to_index: int

    def __repr__(self) -> str:
        return f"{self.from_index}→{self.to_index}"


class Diff(NamedTuple):
    removed: List[int]
    inserted: List[int]
    changed: List[int]
    changed_before: List[int]
    moves: List[Move]


def longest_increasing_subsequence(values: Sequence[int]) -> List[int]:
    """The positions (ascending) of one longest strictly increasing subsequence of ``values``, in
    O(n log n) (patience sorting with back links): the same one the Swift client picks."""
    tails: List[int] = []
    previous = [-1] * len(values)
    for i, v in enumerate(values):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if values[tails[mid]] < v:
                lo = mid + 1
            else:
                hi = mid
        if lo > 0:
            previous[i] = tails[lo - 1]
        if lo == len(tails):
            tails.append(i)
        else:
            tails[lo] = i
    out: List[int] = []
    i = tails[-1] if tails else -1
    while i >= 0:
        out.append(i)
        i = previous[i]
    out.reverse()
    return out


def diff(before: Sequence[str], after: Sequence[str], updated: Iterable[str]) -> Diff:
    """The pure diff of two id lists: removed (indexes before), inserted and changed (after), the
    changed ones by their indexes before, and the fewest moves — the common objects outside a
    longest increasing subsequence of their after-positions taken in before-order."""
    updated_set: Set[str] = set(updated)
    after_index = {}
    for j, id in enumerate(after):
        after_index.setdefault(id, j)
    removed: List[int] = []
    changed_before: List[int] = []
    common: List[Tuple[int, int]] = []
    in_before = set()
    for i, id in enumerate(before):
        in_before.add(id)
        j = after_index.get(id)
        if j is None:
            removed.append(i)
        else:
            common.append((i, j))
            if id in updated_set:
                changed_before.append(i)
    inserted: List[int] = []
    changed: List[int] = []
    for j, id in enumerate(after):
        if id not in in_before:
            inserted.append(j)
        elif id in updated_set:
            changed.append(j)
    kept = longest_increasing_subsequence([to for _, to in common])
    moves: List[Move] = []
    k = 0
    for n, (frm, to) in enumerate(common):
        if k < len(kept) and kept[k] == n:
            k += 1
        else:
            moves.append(Move(frm, to))
    moves.sort(key=lambda m: m.to_index)
    return Diff(removed, inserted, changed, changed_before, moves)


class ChangeDetails:
    """The indexes to remove, insert, reload and move to turn a view of the old result into one
    of the new (a collection view's batch update).

    ``removed_indexes`` and a move's ``from_index`` are positions in the result *before*;
    ``inserted_indexes``, ``changed_indexes`` and a move's ``to_index`` positions in the result
    *after*. Applied together — remove, insert, move — they turn the old list into the new; the
    objects neither removed nor moved keep their relative order, and the moves are as few as
    possible. When ``has_incremental_changes`` is False (the token expired, the index was rebuilt,
    the requests differ, or more edits than objects), reload everything from
    ``fetch_result_after_changes``; the index lists are then empty.
    """

    def __init__(self, before: "FetchResult", after: "FetchResult", updated_ids: Iterable[str] = (),
                 max_incremental_changes: Optional[int] = None, *, incremental: Optional[bool] = None) -> None:
        self.fetch_result_before_changes = before
        self.fetch_result_after_changes = after
        self.removed_indexes: List[int] = []
        self.inserted_indexes: List[int] = []
        self.changed_indexes: List[int] = []
        self.changed_indexes_before: List[int] = []
        self.moves: List[Move] = []
        self.has_incremental_changes = False
        if incremental is False or before.request != after.request or after.token < before.token:
            return
        d = diff(before.ids, after.ids, updated_ids)
        edits = len(d.removed) + len(d.inserted) + len(d.changed) + len(d.moves)
        limit = max_incremental_changes if max_incremental_changes is not None else max(len(after.ids), 1)
        if edits > limit:
            return
        self.has_incremental_changes = True
        self.removed_indexes, self.inserted_indexes, self.changed_indexes = d.removed, d.inserted, d.changed
        self.changed_indexes_before, self.moves = d.changed_before, d.moves

    @classmethod
    def reload(cls, before: "FetchResult", after: "FetchResult") -> "ChangeDetails":
        """Details that only say "reload": ``after`` replaces ``before`` wholesale."""
        return cls(before, after, incremental=False)

    @property
    def covered_through(self) -> int:
        """The newest change these details cover (the after result's token): skip change sets
        with this token or an older one."""
        return self.fetch_result_after_changes.token

    @property
    def has_moves(self) -> bool:
        return bool(self.moves)

    @property
    def removed_ids(self) -> List[str]:
        """The ids of the removed objects, in their order before."""
        return [self.fetch_result_before_changes.ids[i] for i in self.removed_indexes]

    @property
    def inserted_ids(self) -> List[str]:
        """The ids of the inserted objects, in their order after."""
        return [self.fetch_result_after_changes.ids[i] for i in self.inserted_indexes]

    @property
    def changed_ids(self) -> List[str]:
        """The ids of the changed objects, in their order after."""
        return [self.fetch_result_after_changes.ids[i] for i in self.changed_indexes]

    def enumerate_moves(self, body: Callable[[int, int], Any]) -> None:
        """Calls ``body(from_index, to_index)`` for each move, by ``to_index``."""
        for m in self.moves:
            body(m.from_index, m.to_index)

    def apply(self, before: Sequence[Any], inserted: Callable[[int], Any]) -> List[Any]:
        """``before``'s objects (one per index of the result before) turned into the after list
        as a batch update would: ``inserted(i)`` makes the object at new index ``i``. For
        details that are not incremental, every object is made anew."""
        after_count = len(self.fetch_result_after_changes.ids)
        if not self.has_incremental_changes:
            return [inserted(i) for i in range(after_count)]
        slots: List[Any] = [None] * after_count
        filled = [False] * after_count
        for i in self.inserted_indexes:
            slots[i], filled[i] = inserted(i), True
        leaving = set(self.removed_indexes)
        for m in self.moves:
            slots[m.to_index], filled[m.to_index] = before[m.from_index], True
            leaving.add(m.from_index)
        staying = iter([before[i] for i in range(len(before)) if i not in leaving])
        for i in range(after_count):
            if not filled[i]:
                slots[i] = next(staying)
        return slots

    def __repr__(self) -> str:
        if not self.has_incremental_changes:
            return f"ChangeDetails(reload, {len(self.fetch_result_before_changes.ids)} → {len(self.fetch_result_after_changes.ids)})"
        return (f"ChangeDetails(removed={self.removed_indexes}, inserted={self.inserted_indexes}, "
                f"changed={self.changed_indexes}, moves={self.moves})")
