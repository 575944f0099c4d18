"""The marks templates leave in their PrimFuncs for schedules to realise: the contract between
sparsegen/templates/ (what) and sparsegen/schedules/ (how), free of TVM.

- ``COLUMNS``, a loop annotation: the loop runs over the columns of one row of a ``rows*``
  block, each iteration independent of the others. A schedule decides who runs which column
  (vector steps on a CPU, threads of a row on a GPU).
- ``OWNED``, an attribute around a write to a column found at run time (a scatter into the
  row): the schedule runs it where that column's ``COLUMNS`` iterations run, so every element of
  a row has one owner.
- ``AHEAD``, an attribute around the work on one entry of a gather: it names the rows the
  entry at a later position will touch (``[position var, bound, [buffer, row, written], ...]``,
  the attribute's value is the current position). A schedule may prefetch them.
"""

COLUMNS = "sparsegen.columns"
OWNED = "sparsegen.owned"
AHEAD = "sparsegen.ahead"
