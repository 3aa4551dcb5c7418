"""Change details computed exactly as the Swift client does: the shared vectors its property test
writes (Tests/Vectors/change-details.json), and the batch update they describe."""
import json
import random
import unittest

from support import REPO

from photod import ChangeDetails, FetchRequest, FetchResult
from photod.details import diff, longest_increasing_subsequence

VECTORS = REPO / "Tests" / "Vectors" / "change-details.json"


def result(ids, token, request=FetchRequest()):
    return FetchResult(None, request, list(ids), token, len(ids))  # type: ignore[arg-type]


class SharedVectors(unittest.TestCase):
    def test_every_vector_as_the_swift_client_computes_it(self):
        cases = json.loads(VECTORS.read_text())
        self.assertGreaterEqual(len(cases), 400)
        for case in cases:
            with self.subTest(seed=case["seed"]):
                request = FetchRequest() if case["sameRequest"] else FetchRequest(collection="s_favorites")
                before = result(case["before"], case["beforeToken"])
                after = result(case["after"], case["afterToken"], request)
                d = ChangeDetails(before, after, case["updated"], case.get("maxIncrementalChanges"))  # absent: the default
                e = case["expected"]
                self.assertEqual(d.has_incremental_changes, e["hasIncrementalChanges"])
                self.assertEqual(d.removed_indexes, e["removed"])
                self.assertEqual(d.inserted_indexes, e["inserted"])
                self.assertEqual(d.changed_indexes, e["changed"])
                self.assertEqual(d.changed_indexes_before, e["changedBefore"])
                self.assertEqual([list(m) for m in d.moves], e["moves"])
                if d.has_incremental_changes:
                    # Applied as a batch update, the details turn before into after.
                    self.assertEqual(d.apply(case["before"], lambda i: case["after"][i]), case["after"])


class Properties(unittest.TestCase):
    def test_random_lists_rebuild_and_moves_are_fewest(self):
        rng = random.Random(7)
        for _ in range(500):
            before = [f"a{i}" for i in range(rng.randint(0, 30))]
            rng.shuffle(before)
            after = [x for x in before if rng.random() > 0.2]
            if rng.random() < 0.5:
                rng.shuffle(after)
            for k in range(rng.randint(0, 5)):
                after.insert(rng.randint(0, len(after)), f"n{k}")
            d = ChangeDetails(result(before, 1), result(after, 2), [], max_incremental_changes=10 ** 9)
            self.assertEqual(d.apply(before, lambda i: after[i]), after)
            common = [after.index(x) for x in before if x in after]
            # A longest increasing run, counted the slow way.
            best = [1] * len(common)
            for i in range(len(common)):
                for j in range(i):
                    if common[j] < common[i]:
                        best[i] = max(best[i], best[j] + 1)
            self.assertEqual(len(d.moves), len(common) - max(best, default=0))
            for m in d.moves:
                self.assertEqual(before[m.from_index], after[m.to_index])

    def test_by_hand(self):
        self.assertEqual(diff(["a", "b", "c"], ["c", "a", "b"], []).moves, [(2, 0)])
        self.assertEqual(longest_increasing_subsequence([3, 1, 2]), [1, 2])
        d = ChangeDetails(result("abcd", 1), result("dcba", 2), ["a", "c", "zz"], 10 ** 9)
        self.assertEqual((len(d.moves), d.changed_indexes, d.changed_indexes_before), (3, [1, 3], [0, 2]))
        self.assertEqual(d.changed_ids, ["c", "a"])
        # Five edits for four objects: by default a reload is cheaper.
        self.assertFalse(ChangeDetails(result("abcd", 1), result("dcba", 2), ["a", "c"]).has_incremental_changes)
        older = ChangeDetails(result("ab", 5), result("b", 4), ["b"])
        self.assertFalse(older.has_incremental_changes)
        self.assertEqual((older.removed_indexes, older.moves), ([], []))
        self.assertEqual(ChangeDetails.reload(result("ab", 1), result("b", 2)).apply(["a", "b"], lambda i: "B"), ["B"])


if __name__ == "__main__":
    unittest.main()
