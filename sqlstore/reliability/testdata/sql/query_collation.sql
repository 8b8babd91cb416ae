INSERT INTO p (tid, note) VALUES (1, 'Straße'), (2, 'STRASSE'), (3, 'ﬁ');
SELECT note FROM p WHERE note = 'strasse';
SELECT note, COUNT(*) FROM p GROUP BY note ORDER BY note;
SELECT 'a' = 'A', 'a' COLLATE utf8mb4_bin = 'A';
