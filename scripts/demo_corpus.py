"""The hand-written corpus behind kweval's embedded demo dataset.

Everything here was written for this project: the six movies are fictional,
and the reviews are invented user reviews (no real review, title or plot was
copied).  `scripts/make_demo.py` turns this module into the Parquet tables in
`kweval/data/demo/` by running real keyword extractors on the review texts.

Layout (plain Python data, no imports needed by readers):

- ``MOVIES``: a list, one dict per movie, in display order:
  - ``movie``: short slug used as the id ("night_heist");
  - ``title``, ``genre``, ``plot``: display title and a one-line synopsis
    (genre and plot are documentation only; they are not written to Parquet);
  - ``ground_truth``: the ranked ground truth, most important first, as
    ``(keyphrase, helpful, not_helpful)`` vote counts;
  - ``reviews``: ``(title, rating 1-10, text)`` tuples; review ids are
    assigned by position: movie *i* (1-based), review *j* -> ``"m{i}-r{j:02d}"``.

Deliberately awkward but legitimate inputs (the dashboard must cope):

- m1-r14 contains the literal text ``<img src=x onerror=alert(1)>`` and
  m2-r24 the literal text ``<script>alert("x")</script>``: both must be
  shown as text, never interpreted as HTML;
- non-ASCII: accents (canapés, café, cliché), "Über", em dashes, curly quotes
  (m3-r13) and exactly one emoji (m3-r11);
- the ground-truth keyphrase "Plot-Twist" (normalizes to "plottwist");
- m1-r08 is a single short sentence.

Reviews often describe the ground-truth themes in other words ("swindle" and
"con" for "fraud", "dogfight" for "space battles", "comradeship" for
"brotherhood"), so that semantic matching has work to do.
"""

from __future__ import annotations


def _reviews(*items: tuple[str, int, str]) -> list[tuple[str, int, str]]:
    """Collapse the source-code line breaks of each review into single spaces."""
    return [(title, rating, " ".join(text.split())) for title, rating, text in items]


MOVIES: list[dict] = [
    # ------------------------------------------------------------------ m1
    {
        "movie": "night_heist",
        "title": "The Velvet Job",
        "genre": "heist comedy",
        "plot": (
            "Retired art forger Odile Marchetti is dragged back into the game by her "
            "hapless nephew Teddy to con a crooked auction-house owner, Viktor Strand, "
            "during a charity gala in the port city of Porto Vell, only to find that the "
            "masterpiece they mean to steal is one of her own fakes."
        ),
        "ground_truth": [
            ("heist", 412, 31),
            ("fraud", 380, 40),
            ("ensemble cast", 365, 22),
            ("Plot-Twist", 371, 58),
            ("comedy", 298, 35),
            ("art forgery", 276, 19),
            ("witty dialogue", 254, 27),
            ("double cross", 230, 33),
            ("pacing", 214, 41),
            ("soundtrack", 199, 18),
            ("gala", 176, 12),
            ("locksmith", 168, 20),
            ("chemistry", 171, 25),
            ("auction house", 150, 14),
            ("retired criminal", 139, 17),
            ("jazz score", 128, 11),
            ("predictable", 121, 49),
            ("slapstick", 109, 22),
            ("costume design", 97, 9),
            ("pickpocket", 91, 8),
            ("villain", 88, 15),
            ("third act", 80, 21),
            ("nephew", 66, 7),
            ("food truck", 58, 6),
            ("heartwarming", 52, 10),
        ],
        "reviews": _reviews(
            (
                "A swindle you'll want to be part of",
                9,
                """
                I went in expecting a by-the-numbers caper and came out grinning. Odile is
                the best kind of movie crook: tired, brilliant and a little bit petty.
                Watching her plan to con a smug auction-house owner with a painting she may
                or may not have painted herself is pure joy. The crew is a delight,
                especially the locksmith who apologizes to every door he opens. The jazz on
                the soundtrack keeps everything bouncing along. Not deep, but incredibly fun.
            """,
            ),
            (
                "Fun but forgettable",
                6,
                """
                It's fine. The cast clearly had a good time, and a couple of the gags land,
                but the actual robbery is so simple that I never felt the crew was in
                danger. Every obstacle is solved two minutes after it appears. The banter
                is sharp in the first hour and then starts repeating itself. I'd watch it
                on a plane, but I wouldn't pay for a ticket.
            """,
            ),
            (
                "The twist made the whole thing",
                8,
                """
                Without spoiling anything: pay attention to the painting in the very first
                scene. I thought the final reveal was going to be the usual betrayal where
                one member of the gang turns out to be working for the mark, and instead
                the film pulls something much smarter. I went back and rewatched the opening
                and every clue is right there. The script respects its audience.
            """,
            ),
            (
                "Too pleased with itself",
                4,
                """
                Every character talks like they're auditioning for a stand-up special. The
                quips never stop, even in scenes that should have a bit of tension. I also
                guessed the reversal at the end about forty minutes in, which took the air
                out of the finale. Good costumes, good music, and a story that thinks it's
                far cleverer than it is.
            """,
            ),
            (
                "Older heroine, finally",
                9,
                """
                It is so refreshing to see a woman in her sixties lead a caper movie and be
                the smartest person in every room. Odile isn't softened into a cute
                grandma; she is vain, she holds grudges, and she is brilliant at faking old
                masters. The relationship with her nephew Teddy is funny and oddly touching.
                I laughed a lot and teared up once, which I did not expect from a
                con-artist comedy. A word about the supporting players, too: the locksmith
                Gus is played with such anxious sweetness that every door becomes a small
                drama, and the pickpocket's card tricks are done for real, in single takes. The only weak link is the villain, who is
                more of a sneer in a tuxedo than a person. But when the final switch
                happens and Odile allows herself one tiny smile, I was completely won over.
                I'll recommend it to anyone who likes a smart, warm crime film.
            """,
            ),
            (
                "Slapstick overload in the middle",
                5,
                """
                The opening is great and the last twenty minutes are great. The middle,
                though, is a long stretch of people falling into fountains and getting stuck
                in dumbwaiters. One pratfall is funny, six of them is a sign the writers
                didn't know how to get from the planning stage to the gala. The magician
                pickpocket deserved more to do than juggle canapés.
            """,
            ),
            (
                "Great ensemble, thin villain",
                7,
                """
                Everybody in the gang gets a moment, which is rare for a movie with this
                many characters. The hacker who works out of a food truck steals every scene
                she's in. My problem is Viktor Strand: he is crooked because the script says
                so, and we never see why he deserves to be robbed beyond being rude to
                waiters. A stronger antagonist would have made the payoff hit harder.
            """,
            ),
            (
                "Perfect Saturday night",
                10,
                """
                Loved every minute of it.
            """,
            ),
            (
                "Style over substance",
                5,
                """
                Gorgeous to look at. The auction hall is all velvet and brass, the suits are
                immaculate, and the camera glides around like it's in a perfume ad. But I
                couldn't tell you what any of the characters wanted apart from money. The
                scheme to swap the canvas relies on so many coincidences that it stops being
                clever and becomes lucky.
            """,
            ),
            (
                "Crooks with heart",
                8,
                """
                What I liked most is that the film is honest about what its characters are.
                They're grifters, they lie to each other constantly, and the movie doesn't
                pretend they are secretly saints. At the same time the friendship between
                the old forger and the nervous locksmith is really sweet. The scene where
                they rehearse the switch in a laundromat is my favorite of the year.
            """,
            ),
            (
                "Nothing new under the chandelier",
                3,
                """
                If you have seen any caper from the last twenty years, you have seen this
                one. The crew assembly montage, the blueprint scene, the 'something went
                wrong' moment that was actually part of the plan all along. I kept waiting
                for a surprise and it never arrived for me. The actors are likable, which is
                the only reason this isn't a two.
            """,
            ),
            (
                "Way better than the trailer",
                8,
                """
                The trailer made it look like a loud, dumb comedy. It's actually a pretty
                clever little puzzle with a lot of heart. Teddy starts out as an annoying
                screwup and ends up as the emotional center. The timing of the jokes is
                excellent, and the music — lots of upright bass and brushed drums — makes
                every scene feel light on its feet.
            """,
            ),
            (
                "The pacing drags",
                5,
                """
                Two hours and eight minutes is too long for a story this simple. The
                planning section alone could lose fifteen minutes. I enjoyed the
                performances, and the final con is satisfying, but I checked my watch more
                than once. Tighten it up and this would be a solid eight.
            """,
            ),
            (
                "Testing the review box",
                7,
                """
                Quick note before my actual review: I'm a web developer and the first thing
                I did was type <img src=x onerror=alert(1)> into this box to see whether the
                site escapes HTML. It seems to, so good job. As for the movie, it's a breezy
                crime comedy with a clever final reveal and a great lead. The gala sequence
                is the highlight. The romance subplot is pointless.
            """,
            ),
            (
                "Charming",
                7,
                """
                A charming, low-stakes caper. Nobody gets hurt, the bad guy gets what he
                deserves, and the forger gets one last masterpiece. The humor is mostly
                gentle and character-based instead of mean. My parents loved it too, which
                tells you something about the target audience. A nice change from the grim
                crime films that usually come out.
            """,
            ),
            (
                "Confusing final act",
                4,
                """
                I liked the first hour but lost track of who was deceiving whom by the end.
                There are three separate reveals in the last fifteen minutes, and the third
                one undoes the second. Maybe I need to watch again, but a comedy shouldn't
                need a flowchart. The jazz score is great though.
            """,
            ),
            (
                "An icon is born",
                10,
                """
                The lead performance is a masterclass in comic timing. Every raised eyebrow
                is a punchline. When she finally explains how she faked the signature on the
                original canvas thirty years ago, the whole theater applauded. I want a
                sequel where she teaches a class on faking paintings to hopeless students.
                Give this woman every award.
            """,
            ),
            (
                "Why is the romance here?",
                6,
                """
                The love story between Teddy and the gallery assistant adds nothing. Every
                time the film cut to them whispering on a balcony, I wanted to get back to
                the crew. Otherwise, it's a competent, funny caper with a satisfying
                deception at its core and a handful of excellent one-liners.
            """,
            ),
            (
                "Cleverly constructed",
                9,
                """
                Heist movies live or die by their structure, and this one is built like a
                Swiss watch. Each setup in the first act pays off at the gala, and even
                throwaway gags turn out to matter. The locksmith's fear of dogs? Important.
                The pickpocket's coin trick? Important. I admire a script that plants its
                seeds this carefully.
            """,
            ),
            (
                "Predictable and loud",
                3,
                """
                I figured out the big reveal in the first ten minutes because the camera
                lingers on a single object for far too long. After that it was just waiting
                for the characters to catch up with me. The constant brass-heavy music made
                it feel like a commercial. Disappointing from a director whose earlier work
                I loved.
            """,
            ),
            (
                "Good, not great",
                6,
                """
                Solid cast, a few big laughs, a very pretty city, and a con that mostly makes
                sense. It doesn't reinvent the genre but it doesn't need to. The hacker
                operating out of a taco truck is a funny idea that the movie doesn't do
                enough with. I'd recommend it for a relaxed evening with friends.
            """,
            ),
            (
                "Über-stylish fun",
                8,
                """
                Über-stylish and über-fun. The production design deserves a special mention:
                the auction hall, the forger's cluttered studio, the rooftop where the crew
                meets, every set has personality. The dialogue crackles, and the performers
                bounce off each other like an old theater troupe. If the central scam were a
                touch more daring it would be a classic.
            """,
            ),
            (
                "A few slow spots",
                7,
                """
                Most of it works. The opening flashback to the young forger is a brilliant
                hook, and the ending is sly and satisfying. In between there are some saggy
                scenes, mostly involving the villain's bodyguards, that feel like filler.
                Still, the chemistry between the leads carries the film over the rough
                patches.
            """,
            ),
            (
                "Not my kind of humor",
                2,
                """
                I don't understand the good reviews. The jokes are mostly people being clumsy
                or talking very fast. I didn't care whether they pulled off the theft,
                because none of them felt like real people. My friends laughed more than I
                did, so maybe it's just me, but I was bored.
            """,
            ),
            (
                "The gala sequence alone",
                9,
                """
                The twenty-minute gala sequence, with the crew running the swap while a
                string quartet plays and an auctioneer rattles through lot numbers, is some
                of the most fun editing I've seen in a comedy. Every cut is a joke. The rest
                of the film is good, but that stretch is outstanding and worth the ticket on
                its own.
            """,
            ),
            (
                "Sweet story about family",
                8,
                """
                Underneath the crime plot, this is really about an aunt and a nephew who
                haven't spoken in years. The con is the excuse for them to work together
                again. I found that surprisingly moving. It's a warm, generous movie, and
                the cast looks like they became friends while making it.
            """,
            ),
            (
                "Meh",
                5,
                """
                It's perfectly watchable and I'll forget it by next week. Nice costumes, fun
                music, one great twist, way too many scenes of people sneaking through air
                vents. The villain is cartoonish. I wanted either more danger or more jokes;
                it settles for a middle ground that is merely pleasant.
            """,
            ),
            (
                "Clever deception, clever film",
                9,
                """
                I love stories about deception where the audience is also being deceived,
                and this is a great example. The movie misdirects you exactly like Odile
                misdirects her mark. Crisp writing, a charming cast, and that gorgeous
                double-bass score. Easily the most entertaining crime comedy I've seen in a
                while.
            """,
            ),
            (
                "Fine for a rainy day",
                6,
                """
                A pleasant, handsome caper that never quite gets its heart rate up. The cast
                does heavy lifting with a screenplay that is witty in places and flat in
                others. The painting switch is clever, the chase afterwards is not. I'd rate
                it higher if it were twenty minutes shorter.
            """,
            ),
            (
                "Grifters with style",
                8,
                """
                This is a film about professional liars who are very good at their jobs, and
                it's a treat to watch competent people work. The forger's workshop scenes
                are fascinating: aging varnish with tea, building fake auction records,
                bribing an appraiser. I wish there had been more of that craft and less of
                the wacky running around, but overall it's a winner.
            """,
            ),
        ),
    },
    # ------------------------------------------------------------------ m2
    {
        "movie": "star_tide",
        "title": "Tidebreaker",
        "genre": "space opera",
        "plot": (
            "Debt-ridden smuggler Jax Orrin and his ship, the Salt Wren, carry the exiled "
            "heir Ilune across the Drowned Nebula while Admiral Kessarine's Tidal Armada "
            "hunts them from world to world."
        ),
        "ground_truth": [
            ("space battles", 520, 44),
            ("visual effects", 498, 30),
            ("world building", 455, 38),
            ("villain", 402, 51),
            ("long runtime", 388, 77),
            ("orchestral score", 341, 20),
            ("chosen one", 330, 62),
            ("dialogue", 301, 70),
            ("found family", 287, 25),
            ("robot sidekick", 290, 19),
            ("sequel setup", 245, 48),
            ("rebellion", 233, 21),
            ("political intrigue", 211, 35),
            ("alien creatures", 198, 16),
            ("practical effects", 180, 12),
            ("exposition", 176, 41),
            ("smuggler", 160, 15),
            ("princess", 149, 22),
            ("spaceship design", 141, 9),
            ("nebula", 118, 10),
            ("betrayal", 112, 18),
            ("cliffhanger", 105, 30),
            ("CGI", 99, 27),
            ("sword duels", 90, 14),
            ("space opera", 84, 6),
            ("IMAX", 71, 9),
        ],
        "reviews": _reviews(
            (
                "Pure spectacle",
                9,
                """
                This is the kind of movie the biggest screen in town was built for. The
                dogfight inside the nebula, with ships flickering in and out of the storm
                clouds, had my jaw on the floor. The effects are seamless and the music
                swells in all the right places. The story is familiar, sure, but when the
                spectacle is this good I don't care.
            """,
            ),
            (
                "Beautiful and empty",
                4,
                """
                Every frame is a painting, and I felt nothing. The heroine is a prophesied
                savior who never has to earn anything, the smuggler is a knockoff of every
                roguish pilot you've ever seen, and the villain gives speeches instead of
                doing things. Nearly three hours of pretty lights with nothing underneath.
            """,
            ),
            (
                "The world feels lived in",
                9,
                """
                What impressed me most is how much history this universe seems to have.
                Markets on asteroid docks, religious orders that argue about tides, a
                currency based on water. None of it is over-explained; you just absorb it.
                That kind of lore usually takes a trilogy to build, and this film does it in
                the background of chase scenes. I loved the little things: the dockworkers
                who bless each cargo crate with a drop of water, the graffiti in a dead
                language on the walls of the mining colony, the way the Armada officers
                salute with two fingers to the throat. The costumes tell you who is rich and
                who is desperate before anyone speaks. Some viewers will find the plot too
                familiar, and they have a point, but I'd happily watch a whole series just
                wandering around this galaxy. It made me feel like a kid discovering space
                adventures for the first time.
            """,
            ),
            (
                "Too long",
                5,
                """
                Two hours and fifty minutes. The first act on the desert moon could be cut
                in half, and there are at least three scenes where characters stand on a
                bridge explaining the politics of the Armada to each other. The battles are
                great. Everything between the battles tests your patience.
            """,
            ),
            (
                "PIKE is the best character",
                8,
                """
                The little maintenance robot with the cracked faceplate is the heart of the
                movie and I will not be taking questions. Every time PIKE beeped
                sarcastically at the captain, the audience laughed. Beyond the sidekick,
                it's a solid adventure with excellent ship designs and a final battle that
                actually has stakes.
            """,
            ),
            (
                "Admiral Kessarine deserved better",
                6,
                """
                The villain is introduced brilliantly, calmly drowning a rebel outpost by
                opening its airlocks to the nebula, and then she just waits on her flagship
                for two hours. A great actress with a great look, wasted. The heroes are
                fine, the effects are amazing, but a space adventure is only as good as its
                antagonist.
            """,
            ),
            (
                "Clunky lines everywhere",
                4,
                """
                I wish someone had given the screenplay one more pass. People say things like
                'The tides of fate are turning, Captain' with a straight face. The romance is
                conveyed entirely through meaningful stares. The visuals are stunning enough
                that I still kind of enjoyed it, but the writing made me wince a lot.
            """,
            ),
            (
                "A real ending, please",
                5,
                """
                Fun ride, but it doesn't end. It stops. Half the plot threads are left
                dangling for the inevitable part two, including the reveal about the heir's
                mother, which arrives in the last minute and then cuts to credits. I'm tired
                of films that treat themselves as the first chapter of a franchise instead
                of a complete story.
            """,
            ),
            (
                "Saw it in IMAX twice",
                10,
                """
                The sound in the big format is unreal. When the Armada's dreadnought enters
                the frame you feel it in your chest. I saw it twice in a week and noticed new
                details in the backgrounds both times. Yes, the plot leans on a prophecy, but
                every great myth does. This is what going to the movies is about.
            """,
            ),
            (
                "Puppets and models!",
                8,
                """
                I love that so many of the creatures are actual puppets. The market scene on
                Varrow Station is full of weird, tactile aliens that you could reach out and
                touch. The ships were clearly built as models too, and they have a weight
                that pure computer imagery rarely manages. Story is standard, craft is
                extraordinary.
            """,
            ),
            (
                "Found family done right",
                9,
                """
                At its core this is a story about a bunch of outcasts — a smuggler with
                debts, a deposed royal, a deserter, and a robot nobody wanted — who become a
                crew and then a family. The campfire scene on the ice moon, where they trade
                stories about home, is quietly one of the best scenes of the year.
            """,
            ),
            (
                "Generic",
                3,
                """
                Prophecy, rebels, an evil empire, a rogue pilot, a cute droid. I've seen this
                movie a hundred times and this version adds nothing except a larger budget.
                The emotional beats are telegraphed from miles away. If you're new to the
                genre you'll probably love it. I'm not, and I didn't.
            """,
            ),
            (
                "Politics were a nice surprise",
                7,
                """
                I didn't expect a space adventure to spend so much time on senate votes and
                backroom deals, and I mostly liked it. The scheming between the noble houses
                gives the war real texture. It does occasionally grind the movie to a halt,
                and a couple of subplots could have been trimmed, but it's refreshing to see
                a blockbuster with some brains.
            """,
            ),
            (
                "Technically dazzling, emotionally flat",
                6,
                """
                The computer effects are among the best I've seen. The nebula storms ripple
                and glow, the ships scrape through debris fields, and the scale is enormous.
                But I never connected with the princess, and the twist about the captain's
                old partner turning traitor had no impact because we met him ten minutes
                earlier.
            """,
            ),
            (
                "Music!!",
                9,
                """
                The composer deserves every award. The main theme is instantly hummable, the
                villain's motif is all low strings and choir, and the quiet piano piece
                during the funeral in space wrecked me. Combined with the visuals, the film
                is an experience even when the script stumbles.
            """,
            ),
            (
                "The sword fights are weak",
                5,
                """
                All the fleet combat is fantastic, but the close-quarters duels with the
                plasma blades are choppy and badly edited. You can't tell who is hitting
                whom. The final duel on the collapsing bridge should have been the climax and
                it's the weakest part of the film. Lovely spaceship battles, though.
            """,
            ),
            (
                "My kids loved it",
                8,
                """
                Took my nine- and eleven-year-old, and they haven't stopped talking about it.
                They want robot toys, spaceship toys, and to know when the next one comes
                out. I enjoyed it too; it's long, but the action is frequent and clear enough
                that younger viewers can follow. Some scary moments with the sea-serpent
                thing in the ice caves.
            """,
            ),
            (
                "Info-dumps galore",
                4,
                """
                For the first forty minutes characters take turns explaining the history of
                the galaxy to each other. Show me, don't tell me. Once the crew leaves the
                capital and the chase begins, it gets much better, but getting there is a
                slog. The creature work and the ship designs are gorgeous, and that's what
                saves it.
            """,
            ),
            (
                "Best space movie in ages",
                10,
                """
                Thrilling, gorgeous, surprisingly funny, and with a finale that had the
                entire audience cheering. The smuggler and the princess have real sparks, the
                uprising feels like a cause worth fighting for, and the Armada is genuinely
                frightening. I can't wait to spend more time in this universe.
            """,
            ),
            (
                "So much CGI",
                5,
                """
                Some of the digital effects are amazing, and some look like a video game
                cutscene. The crowd shots on the capital world especially have that
                weightless plastic look. Mixed bag overall: solid action, weak characters,
                beautiful music, and a runtime that needed a firmer editor.
            """,
            ),
            (
                "Heir apparent",
                7,
                """
                The young actress playing Ilune does a lot with a thin part. Her character's
                whole arc is learning to accept a destiny she never asked for, which is a
                well-worn path, but she sells the doubt and fear. I also appreciated that the
                rescue in the third act is her plan, not the smuggler's.
            """,
            ),
            (
                "Designs worth the price",
                8,
                """
                As someone who draws spaceships for fun, I was in heaven. The Salt Wren looks
                like a fishing trawler crossed with a cathedral, the Armada cruisers are all
                jagged coral shapes, and every fighter has a distinct silhouette you can read
                in the middle of a battle. Whoever did the concept art is a genius.
            """,
            ),
            (
                "Fun but messy",
                6,
                """
                The backstabbing in the second act, when the crew discovers one of them sold
                them out, is a good twist. Unfortunately the film then spends another hour on
                a detour to the ice moon that could have been cut entirely. The ending sets
                up a sequel more than it resolves anything. Still fun.
            """,
            ),
            (
                "Lost a bet, here's my review",
                7,
                """
                My coworker bet me that this site would break if I typed
                <script>alert("x")</script> into a review, so there it is, let's see. Now the
                actual review: a big, loud, colorful space adventure with terrific ships and
                a score that sticks in your head. The plot is the same chosen-hero story as
                always, and it is at least forty minutes too long, but the battles are worth
                it.
            """,
            ),
            (
                "Not for me",
                2,
                """
                I fell asleep during the senate scenes and woke up during a battle that
                looked exactly like the previous battle. I don't care about prophecies or
                royal bloodlines, and the movie gave me no other reason to care. Others in my
                group liked it, so maybe it's a genre thing.
            """,
            ),
            (
                "Space opera as it should be",
                9,
                """
                Grand, sincere, operatic in the best sense. It isn't embarrassed about capes,
                prophecies, and swelling music, and because it commits completely, it works.
                The scale of the final fleet engagement, with hundreds of ships lit by the
                exploding star, is unforgettable.
            """,
            ),
            (
                "Decent but derivative",
                6,
                """
                It's a well-made remix of better films. You'll spot the borrowed trench run,
                the borrowed cantina, the borrowed mentor death. It's done with so much
                polish that it's still enjoyable, and the robot sidekick is an original
                creation that steals scenes. A fun matinee.
            """,
            ),
            (
                "Stunning visuals, shallow heart",
                5,
                """
                The images will stay with me: the ocean planet seen through a cracked canopy,
                the ring of dead satellites, the silent explosion of the flagship. The
                characters will not. I couldn't tell you a single thing about the smuggler
                beyond 'he owes money'. Good looking, hollow.
            """,
            ),
            (
                "Surprisingly emotional",
                8,
                """
                I went in for the explosions and came out thinking about the crew's farewell
                to their fallen pilot. There's real grief in this film, and the way these
                misfits become a family gives the action weight. It's overlong and the talky
                political scenes drag, but I was invested by the end.
            """,
            ),
            (
                "The nebula sequence",
                9,
                """
                The chase through the Drowned Nebula, with the Salt Wren hiding in lightning
                clouds while the Armada's hunters sweep the fog, is a perfect action scene.
                Clear geography, escalating danger, gorgeous color. If the rest of the film
                were at that level it would be a masterpiece. As it is, it's a very good
                adventure.
            """,
            ),
        ),
    },
    # ------------------------------------------------------------------ m3
    {
        "movie": "long_table",
        "title": "The Long Table",
        "genre": "family drama",
        "plot": (
            "After their mother Helen's stroke, three estranged siblings (Ruth, a surgeon; "
            "Danny, a stalled musician; and Clara, who stayed home to care for her) spend "
            "one autumn at the family apple orchard deciding whether to sell it."
        ),
        "ground_truth": [
            ("family", 610, 25),
            ("grief", 540, 31),
            ("siblings", 502, 20),
            ("acting", 488, 18),
            ("slow pacing", 420, 95),
            ("caregiving", 377, 14),
            ("inheritance", 365, 22),
            ("forgiveness", 340, 17),
            ("dinner scene", 322, 12),
            ("realistic dialogue", 301, 26),
            ("mother", 270, 10),
            ("tearjerker", 281, 33),
            ("orchard", 230, 9),
            ("flashbacks", 214, 45),
            ("stroke", 201, 8),
            ("memory loss", 188, 11),
            ("resentment", 170, 15),
            ("ending", 166, 40),
            ("cinematography", 150, 12),
            ("piano score", 132, 9),
            ("melodrama", 120, 47),
            ("holiday", 101, 14),
            ("small town", 88, 7),
            ("character study", 80, 6),
            ("selling the farm", 71, 10),
            ("ensemble", 65, 5),
            ("quiet", 52, 9),
        ],
        "reviews": _reviews(
            (
                "Devastating in the best way",
                10,
                """
                I haven't cried this hard at a movie in years. The three siblings feel like
                real people: they love each other, they can't stand each other, and they keep
                falling into the roles they had as kids. The scene where Clara finally tells
                her brother what the last two years of looking after their mother cost her is
                one of the best pieces of acting I've seen. She doesn't shout. She lists
                things: the night feedings, the missed job interview, the friends who
                stopped calling. Her brother just stands there holding a casserole dish. I
                recognized my own family in that kitchen, and I think most people will. The
                film is slow, and a few of the flashbacks could go, but I never wanted it
                to end, because ending meant leaving these people. It's rare for a drama to
                make you feel that much affection for characters who behave this badly to
                each other.
            """,
            ),
            (
                "Slow",
                4,
                """
                I understand what it was going for, but almost nothing happens. People sit at
                a table, people walk through an orchard, people stare out of windows. The
                performances are good, and I believed the family, but I needed some kind of
                momentum and the film refused to give me any. Very slow.
            """,
            ),
            (
                "Every family has this table",
                9,
                """
                My siblings and I watched this together and had to pause it twice to talk.
                The arguments about who got what, who visited, who called — it's
                uncomfortably accurate. The film never picks a side, which is its greatest
                strength. Everyone is a little right and a little selfish.
            """,
            ),
            (
                "Overwritten",
                5,
                """
                The actors are wonderful, but the script keeps having characters deliver
                perfectly shaped monologues about their childhood wounds. Real families
                don't talk like that; they dodge and mumble. When the movie lets silence do
                the work, it's powerful. When it spells everything out, it turns into a stage
                play.
            """,
            ),
            (
                "A love letter to caregivers",
                9,
                """
                As someone who spent three years looking after my dad, I felt this film was
                made for me. The exhaustion, the small humiliations, the way the relatives
                who live far away swoop in with opinions — all of it is here. Clara's story
                deserves a film of its own. Thank you to whoever wrote this.
            """,
            ),
            (
                "The mother is the standout",
                8,
                """
                The actress playing Helen barely speaks after the stroke, and she still
                dominates every scene. Her eyes do everything. The moment she forgets Danny's
                name and then, a minute later, hums the song he wrote as a teenager, broke
                the whole theater. A quiet, careful film with a towering performance at its
                center.
            """,
            ),
            (
                "Soap opera in a cardigan",
                3,
                """
                Underneath the tasteful photography and soft piano, this is a soap opera. A
                secret will, a long-lost letter, a sibling with a hidden debt, a last-minute
                reconciliation at the deathbed. It wants credit for being restrained, but the
                plot mechanics are as manipulative as any TV movie.
            """,
            ),
            (
                "Beautiful to look at",
                7,
                """
                The autumn orchard is photographed like a Dutch painting, all amber light and
                long shadows. The kitchen scenes are lit by one lamp and feel warm and
                claustrophobic at the same time. The story is familiar, but the craft behind
                the camera is exceptional.
            """,
            ),
            (
                "Who gets the farm?",
                6,
                """
                The fight over whether to sell the orchard is the most gripping part of the
                movie, and I wish it had been the focus. The flashbacks to the siblings as
                kids are sweet but interrupt the momentum every time. Strong acting, uneven
                structure, and an ending that felt rushed after so much patience.
            """,
            ),
            (
                "One of the year's best",
                10,
                """
                Honest, funny in unexpected places, and crushingly sad. The big dinner scene,
                filmed in what feels like one long take, is a masterclass: old jokes, old
                grudges, a dropped gravy boat, a sudden burst of laughter that turns into
                tears. I felt like I was sitting at that table with them.
            """,
            ),
            (
                "Bring tissues",
                9,
                """
                Bring tissues. Lots of them. I ugly-cried 😭 through the last half hour.
                It's about losing a parent slowly, and about siblings who have to learn to be
                adults with each other instead of the kids they were. Not a flawless film,
                the middle drags a little, but it's so truthful that I didn't care.
            """,
            ),
            (
                "Nothing I haven't seen",
                4,
                """
                Estranged siblings come home, sick parent, old house, old wounds, group hug.
                It's competently made and well acted, but it's a template. I kept predicting
                the next scene and I was always right. If you haven't seen a dozen of these
                it'll probably hit harder.
            """,
            ),
            (
                "A quiet “small” film that isn’t small",
                8,
                """
                People will call this a “small” film, and I suppose it is — one house, five
                actors, a few weeks in autumn. But it’s about everything: money, guilt, duty,
                the stories families tell about themselves. The script avoids cliché almost
                everywhere, and when it doesn’t, the cast makes the clichés feel earned.
                Danny’s café scene with his ex is a highlight.
            """,
            ),
            (
                "Couldn't connect",
                5,
                """
                I admired it more than I felt it. Ruth is so cold for most of the film that
                when she finally breaks down it didn't land for me. Clara is wonderful. Danny
                is a collection of tics. Maybe it's a movie you respond to more if you're in
                the middle of this situation yourself.
            """,
            ),
            (
                "Forgiveness without fireworks",
                9,
                """
                I loved that the reconciliation isn't a big speech. It's Ruth quietly taking
                over the night shift so her sister can sleep, and Danny fixing the porch step
                that everyone has been tripping on for years. The movie understands that
                people make peace through small actions, not declarations.
            """,
            ),
            (
                "The ending",
                6,
                """
                Strong for ninety minutes, then the last fifteen go wrong. The final
                time-jump, with everybody happy and the orchard thriving, feels like a studio
                note. The film had earned a more ambiguous ending. Up to that point, a moving
                and well-observed family portrait.
            """,
            ),
            (
                "Mom's memory",
                8,
                """
                The way the film handles Helen's confusion after the stroke is careful and
                unsentimental. She's not a saint or a tragedy; she's stubborn and funny and
                sometimes cruel, and the illness sharpens all of it. Her children keep trying
                to get back a mother who isn't fully there anymore, and that's the real
                sorrow of the film.
            """,
            ),
            (
                "Boring",
                2,
                """
                I'm sorry, but this was two hours of people whispering in a kitchen and
                crying in cars. My wife liked it a lot; I kept waiting for something,
                anything, to actually happen, and when it finally did, it was a phone call.
                The apple trees were pretty, and the old lady was good. That's all I've got.
            """,
            ),
            (
                "Masterful ensemble",
                9,
                """
                There isn't a weak link in the cast. Each sibling has a distinct rhythm of
                speech and a distinct way of avoiding the subject. Even the minor roles, the
                neighbor who wants to buy the land, the hospice nurse, feel like full people.
                This is what a character-driven drama should look like.
            """,
            ),
            (
                "Hits close to home",
                10,
                """
                We sold my grandmother's house last spring after a year of fighting about it,
                and this film captured that experience more precisely than anything I've
                seen. The dull paperwork, the sudden tenderness, the argument over a single
                chipped bowl that is really about twenty years of jealousy. Extraordinary.
            """,
            ),
            (
                "Pretentious",
                3,
                """
                Long takes of steam rising from coffee. Characters staring at apples.
                Dialogue that stops mid-sentence because apparently finishing a thought is
                too mainstream. There's a good ninety-minute movie hidden in this two-hour
                exercise in restraint, but I didn't have the patience to find it.
            """,
            ),
            (
                "The Thanksgiving scene",
                8,
                """
                The Thanksgiving sequence is going to be taught in film schools. It starts as
                a comedy of manners, becomes a screaming match about money, and ends with all
                three siblings washing dishes in silence. No music, no cuts to close-ups for
                emphasis. Just people. I held my breath through the whole thing.
            """,
            ),
            (
                "Good but heavy",
                7,
                """
                It's very good and I'm not sure I'd ever watch it again. It is relentlessly
                sad, with only a handful of jokes to let the air out. The piano theme is
                lovely. The acting is superb across the board. Go in knowing you'll need a
                walk afterwards.
            """,
            ),
            (
                "Brothers and sisters",
                8,
                """
                What struck me is how quickly adult siblings slide back into childhood
                patterns. Ruth is still the bossy oldest, Danny is still the baby who gets
                away with everything, and Clara is still the one nobody notices. The film
                lets them grow just a little by the end, which feels truthful.
            """,
            ),
            (
                "Too much crying, not enough story",
                4,
                """
                Every scene ends in tears. After the fifth teary hug, it stopped having any
                effect on me. The pieces of a great film are here, a strong cast, an
                interesting conflict over the orchard, but it leans so hard on sadness that
                it becomes monotonous.
            """,
            ),
            (
                "Perfectly acted",
                8,
                """
                I'd watch these actors read a phone book. The sister who stayed home gives a
                performance full of buried anger; the brother is funny and pathetic; the
                mother, with barely any lines, is heartbreaking. The plot is simple, but the
                performances give it enormous depth.
            """,
            ),
            (
                "Flashbacks don't work",
                5,
                """
                The scenes in the present are excellent. The flashbacks to the summer when
                the father left are shot in a golden haze and feel like a different, much
                worse movie. They explain things we'd already figured out. Cut them and this
                is a much stronger drama.
            """,
            ),
            (
                "Small town, big heart",
                7,
                """
                The portrait of the little farming town is affectionate without being cute.
                The diner, the church bake sale, the feed store where everyone already knows
                about Helen's stroke. It gives the family story a setting that feels real. A
                modest, heartfelt movie that I'll remember.
            """,
            ),
            (
                "Honest about money",
                8,
                """
                Most family dramas pretend money doesn't matter. This one knows that what
                parents leave behind is where love and resentment meet. The scene where the
                siblings go through the bank statements together is as tense as a thriller.
                Clear-eyed and generous at the same time.
            """,
            ),
            (
                "Lovely",
                7,
                """
                Quiet, sad and beautifully acted. It's a little too long and a little too
                tidy at the end, but it's full of moments that rang completely true to me.
                The mother humming to herself among the apple trees, unsure which decade
                she's in, is an image I'll keep for a long time.
            """,
            ),
        ),
    },
    # ------------------------------------------------------------------ m4
    {
        "movie": "hollow_pines",
        "title": "Hollow Pines",
        "genre": "horror",
        "plot": (
            "Grieving their young daughter, Maya and Theo rent a winter cabin on Black Loon "
            "Lake, where something beneath the water has learned to speak in the voices "
            "of the dead."
        ),
        "ground_truth": [
            ("atmosphere", 455, 20),
            ("jump scares", 430, 66),
            ("slow burn", 398, 52),
            ("sound design", 360, 15),
            ("creature design", 344, 29),
            ("ending", 310, 80),
            ("dread", 295, 18),
            ("lake", 260, 11),
            ("grief", 248, 14),
            ("isolation", 231, 10),
            ("gore", 225, 38),
            ("remote cabin", 204, 19),
            ("mimicry", 190, 12),
            ("too dark", 177, 30),
            ("predictable", 160, 44),
            ("practical effects", 151, 8),
            ("caretaker", 133, 12),
            ("couple", 120, 9),
            ("synth score", 115, 7),
            ("dog", 98, 16),
            ("cheap thrills", 90, 25),
            ("folklore", 84, 6),
            ("low budget", 73, 11),
        ],
        "reviews": _reviews(
            (
                "Genuinely scary",
                9,
                """
                It's been a long time since a horror movie made me check the locks when I
                got home. The fear builds slowly, the woods are always too quiet, and when
                the voice calls from the water for the first time, the theater went
                completely silent. The audio team deserves an award; I heard things behind
                me that weren't there.
            """,
            ),
            (
                "Nothing happens for an hour",
                4,
                """
                I like slow horror, but there's slow and there's stalled. The first hour is
                the couple unpacking, arguing, and looking at the lake. The last twenty
                minutes are great, with some truly nasty imagery, but I was half asleep by
                then. Trim thirty minutes and you have something.
            """,
            ),
            (
                "That creature",
                8,
                """
                Without spoiling anything, when you finally see what lives in the lake, it
                is horrible in the best way. Long limbs, a face that's almost human, a mouth
                that moves a second after the voice. Mostly puppetry and prosthetics, from
                what I could tell, and it looks wet and heavy and real. Nightmares
                guaranteed.
            """,
            ),
            (
                "Lazy startles",
                3,
                """
                Loud noise, cat, loud noise, it was just the husband, loud noise, a bird hits
                the window. The film has a genuinely creepy idea about loss and voices, and
                it buries it under the laziest scare tactics there are. Whenever the music
                went quiet, I just covered my ears and waited for the bang.
            """,
            ),
            (
                "A film about mourning",
                9,
                """
                The monster is almost secondary. This is about a couple who lost their
                daughter and are stuck in different stages of mourning, and a lake that
                offers them the one thing they want most: to hear her voice again. It's
                horrifying because you understand exactly why they keep walking down to the
                water. Maya wants to believe; Theo wants to leave; neither of them can say
                out loud what they are really afraid of, which is that they will forget
                what their child sounded like. The creature, when it finally appears, is
                frightening, but the scene that kept me awake was a quiet one: Theo alone in
                the kitchen, playing an old voicemail from his daughter over and over while
                something outside answers in the same voice. That is a brilliant, cruel
                idea. I've rarely seen horror this sad, and I think it'll be remembered
                long after the louder films of this year are forgotten.
            """,
            ),
            (
                "I couldn't see anything",
                4,
                """
                Maybe it was my theater, but half of the movie is pitch black. The night
                scenes in the woods are just shapes moving in darkness, and the climax in the
                boathouse might as well have been a radio play. Good sound, creepy idea, but
                I want to actually see the horror I paid for.
            """,
            ),
            (
                "That final shot!",
                10,
                """
                The last shot is going to haunt me. I won't say anything except that the film
                sets up a rule early on about the voices and then breaks your heart with it.
                Bleak, brave, and perfect. Some people in my screening groaned, but I think
                it's the only honest way the story could end.
            """,
            ),
            (
                "Hated the ending",
                5,
                """
                The first ninety minutes are a tense, well-made haunted lake story. Then the
                ending throws it all away with a twist that makes no sense if you think about
                it for more than a minute. Why would the caretaker do that? Why wait twenty
                years? Frustrating, because the build-up is excellent.
            """,
            ),
            (
                "Mood for days",
                8,
                """
                Fog on the water, the creak of the dock, a radio that only picks up static
                and a song from the fifties. The filmmakers know that what you almost see is
                scarier than what you see. It's a mood piece more than a roller coaster, and
                it's one of the creepiest moods I've sat in for a while.
            """,
            ),
            (
                "Gross",
                6,
                """
                I wasn't prepared for how graphic the second half gets. The fishing hook
                scene made me look away, and I'm not squeamish. If you came for the slow,
                eerie ghost story the first half promises, the blood may put you off. If you
                came for the blood, you'll wait a long time for it. Confused about its
                audience.
            """,
            ),
            (
                "Best horror of the year",
                10,
                """
                Terrifying, sad, and beautifully made. The two leads are so good that you
                believe their marriage, cracks and all, and that makes every scare hit
                harder. The score is just a low synthesizer drone that crawls under your
                skin. I can't stop thinking about the lake.
            """,
            ),
            (
                "Don't hurt the dog",
                3,
                """
                Spoiler, I guess, but they kill the dog, and they do it for a cheap shock
                that adds nothing to the story. I checked out emotionally after that. The
                rest is a competent creepy-cabin movie with a couple of good scares, but I
                won't be recommending it to anyone.
            """,
            ),
            (
                "Old-fashioned chills",
                8,
                """
                This reminded me of the ghost stories I read as a kid: an isolated house, a
                local legend nobody will talk about, a grumpy old groundskeeper with a
                lantern. It's not reinventing anything, but it's made with care and it's
                properly frightening. The scene with the voice coming through the baby
                monitor had me gripping the armrest.
            """,
            ),
            (
                "Seen it all before",
                4,
                """
                Couple goes to a remote cabin to heal, weird local warns them, things go
                bump, the husband sees something nobody believes, third act bloodbath. I
                could have written this on a napkin. The creature is cool, the photography
                is nice, but there wasn't a single moment I didn't see coming.
            """,
            ),
            (
                "Sound design masterclass",
                9,
                """
                Watch this with good headphones or in a great theater. Every voice from the
                lake is slightly off, as if someone is imitating speech they've only heard
                through water. Footsteps in the wrong rhythm. A child's laugh mixed almost
                below hearing. The visuals are good, but the audio is what makes it
                terrifying.
            """,
            ),
            (
                "Patience pays off",
                8,
                """
                People complaining about the pacing are missing the point. The first hour
                makes you live in the couple's grief and the cabin's silence, so when the
                lake starts using their daughter's voice, it devastates you. A patient,
                confident film that trusts its audience.
            """,
            ),
            (
                "Low budget, high effort",
                7,
                """
                You can tell they didn't have much money. One location, a tiny cast, and some
                shaky digital effects in the boat scene. But they spent what they had wisely:
                on the actors, on the sound, and on one great creature. More creative than
                most studio horror.
            """,
            ),
            (
                "Lonely and cold",
                7,
                """
                What stayed with me is the isolation. No phone signal, the nearest town an
                hour away, snow starting to close the road. The couple have nobody but each
                other, and they're barely speaking. The lake is the scariest thing, but the
                loneliness is the saddest.
            """,
            ),
            (
                "Middle of the road",
                5,
                """
                A few creepy images, a good lead performance, and a lot of people walking
                slowly toward noises they should run away from. I liked the legend about the
                drowned village under the lake and wish it had been explored more.
                Middle-of-the-road horror.
            """,
            ),
            (
                "The voice thing",
                8,
                """
                The central idea, something that copies the voices of people you've lost, is
                so simple and so cruel. Every time Maya hears her daughter call 'Mama' from
                the reeds, you want her to go and you want her to run. The film squeezes a
                lot of tension out of that one idea without overusing it.
            """,
            ),
            (
                "Not scary",
                2,
                """
                My friends and I laughed through most of it. The creature looks like a wet
                mannequin, the husband makes every wrong choice possible, and the 'scary'
                voice sounds like someone talking into a tin can. It takes itself so
                seriously that it becomes funny. Skip it.
            """,
            ),
            (
                "Frightening folk horror",
                8,
                """
                The backstory about the flooded village and the lake that 'keeps what it's
                given' gives the film a folk-tale feel I loved. The old caretaker telling the
                story by the stove is a perfect campfire scene. This is horror rooted in a
                place and its legends, and it's all the better for it.
            """,
            ),
            (
                "Scared stiff",
                9,
                """
                I watched this alone at midnight, which was a mistake. The quiet stretches
                are so tense that I found myself holding my breath, and when the scares come
                they're earned. The image of the figure standing waist-deep in the lake,
                perfectly still, facing the cabin, is burned into my brain.
            """,
            ),
            (
                "The marriage is the story",
                7,
                """
                I was more interested in Maya and Theo's failing marriage than in the
                monster. Their arguments about whether to have another child, whether to sell
                the house, whether to blame each other, are raw and painful. The horror
                elements sometimes feel like they're getting in the way of a good drama.
            """,
            ),
            (
                "Effective but familiar",
                6,
                """
                It does the job. Some tense sequences, an effective monster, a memorable
                soundscape. It also leans on every cabin horror cliché: the warning from the
                local, the basement with old newspaper clippings, the phone with no signal.
                Good for a Friday night with popcorn.
            """,
            ),
            (
                "Dark — literally",
                5,
                """
                Visually murky and narratively murky. I appreciate that the director wanted
                to keep the creature hidden, but when the climax happens in near-total
                darkness with shaky camera work, it's frustrating rather than frightening.
                The first half, with its grey daylight and mist, is much stronger.
            """,
            ),
            (
                "Creepy from start to end",
                9,
                """
                There's hardly a cheap startle in the whole thing, and it's scarier for it.
                It's all about creeping unease: a chair moved an inch, a wet footprint on the
                porch, the caretaker's refusal to look at the water. By the time the horror
                arrives, you're already wound so tight that the smallest noise makes you
                jump.
            """,
            ),
            (
                "Good performances, weak script",
                5,
                """
                The actress playing Maya is phenomenal, and her grief feels painfully real.
                But the script keeps making characters behave stupidly so that the plot can
                continue. Why go to the lake at night alone? Again? A great performance stuck
                in a movie that doesn't trust its own premise.
            """,
            ),
            (
                "Loved the synth music",
                8,
                """
                The score is a throwback to eighties horror, all pulsing synthesizers and
                eerie pads, and it fits surprisingly well with the rural setting. It gives
                the lake a strange, otherworldly quality. Combined with the beautiful wintry
                photography, it's a stylish and memorable horror film.
            """,
            ),
            (
                "Gorehounds, look elsewhere",
                6,
                """
                Mostly a slow ghost story with a couple of bloody moments. The violence that
                is there is effective, though, and the creature's reveal is a great physical
                effect. If you want nonstop thrills, this isn't it. If you like your horror
                moody and sad, give it a try.
            """,
            ),
        ),
    },
    # ------------------------------------------------------------------ m5
    {
        "movie": "brass_lanterns",
        "title": "Brass Lanterns",
        "genre": "musical",
        "plot": (
            "In a 1950s seaside town, Nell, the shy daughter of the lighthouse keeper, joins "
            "a hopeless brass band to win the harbor festival and falls for Arlo, a "
            "tap-dancing trumpet player, while a hotel owner schemes to cancel the festival."
        ),
        "ground_truth": [
            ("musical numbers", 470, 21),
            ("choreography", 441, 17),
            ("songs", 433, 25),
            ("singing", 390, 30),
            ("romance", 352, 41),
            ("feel-good", 340, 22),
            ("costumes", 301, 9),
            ("tap dance", 296, 11),
            ("thin plot", 270, 58),
            ("catchy", 255, 20),
            ("brass band", 240, 8),
            ("finale", 221, 15),
            ("ballad", 205, 13),
            ("nostalgia", 190, 17),
            ("set design", 171, 7),
            ("cheesy", 166, 49),
            ("lyrics", 150, 19),
            ("colorful", 132, 6),
            ("lighthouse", 120, 5),
            ("live vocals", 115, 10),
            ("supporting cast", 101, 8),
            ("seaside town", 92, 4),
            ("1950s", 80, 9),
            ("festival", 72, 6),
            ("overlong numbers", 60, 14),
        ],
        "reviews": _reviews(
            (
                "Pure joy",
                10,
                """
                I walked out of the theater humming and I'm still humming three days later.
                Every number is staged with so much energy and invention, the colors pop off
                the screen, and the lead has a voice that gave me chills in the big solo at
                the lighthouse. This is the most purely happy I've been in a cinema in years.
            """,
            ),
            (
                "Songs are forgettable",
                5,
                """
                It looks fantastic and the dancing is impressive, but I couldn't hum a single
                tune on the way out. The words are mostly rhymes about the sea and the heart.
                For a musical, that's a big problem. The dance numbers carry it, especially
                the tap sequence on the pier.
            """,
            ),
            (
                "The pier number!",
                9,
                """
                The tap routine on the pier in the rain, with the horn section playing from
                the fishing boats, is one of the great musical sequences of the last decade.
                It's filmed in long, fluid takes so you can see the footwork. I'd pay to see
                those four minutes alone.
            """,
            ),
            (
                "Cheesy",
                4,
                """
                I know musicals are supposed to be a bit corny, but this one is sugar on top
                of sugar. Nobody in the town has a single real problem. The romance is two
                people making eyes at each other across a bandstand. Fine for kids, I
                suppose, but I felt like I was being force-fed cotton candy.
            """,
            ),
            (
                "They actually sing!",
                8,
                """
                So happy that the cast sings live on set instead of lip-syncing to studio
                recordings. You can hear the breath, the little cracks, the emotion, and it
                makes the songs feel alive. Not every voice is perfect, but that's the point.
                The lead's final solo is stunning.
            """,
            ),
            (
                "Gorgeous costumes",
                8,
                """
                Every dress in this movie deserves its own museum exhibit. The festival scene
                is a riot of polka dots, sailor collars, and bright yellow raincoats. The
                production design of the little harbor town is equally lovely, like a
                postcard come to life. The story is slight, but my eyes were happy the whole
                time.
            """,
            ),
            (
                "Where's the story?",
                4,
                """
                There is barely a plot here. Girl joins band, band needs to win contest, girl
                likes boy, band wins contest. Everything between the songs is filler. A
                musical can have a simple story, but it needs stakes, and there are none. The
                choreography is great, which is the only reason I stayed.
            """,
            ),
            (
                "Feel-good perfection",
                9,
                """
                Sometimes you just need a movie that makes you smile for two hours, and this
                is that movie. Warm, funny, full of music and color, and with a lovely
                message about finding your voice. My grandmother and my ten-year-old both
                loved it, which tells you how universal it is.
            """,
            ),
            (
                "Too many songs",
                5,
                """
                I counted nineteen musical numbers. Nineteen! Some of them are only a minute
                long, but several go on forever and repeat the same chorus over and over. The
                dance at the festival is overlong by at least three minutes. A tighter edit
                would have made the good songs shine.
            """,
            ),
            (
                "Nostalgia done well",
                8,
                """
                It's a loving tribute to the old studio musicals my parents grew up with,
                without being a copy. The harbor town in the fifties is idealized, of course,
                but the film knows it and has fun with it. The horn arrangements are
                fantastic; I bought the soundtrack album the same night.
            """,
            ),
            (
                "The band is the real star",
                8,
                """
                The scenes with the little brass band rehearsing in the fish warehouse are my
                favorite part. Everyone is slightly out of tune, the old tuba player keeps
                falling asleep, and the way they slowly become good is incredibly satisfying.
                Great supporting players, each with their own little musical moment. The
                trombonist who only plays when nobody is watching, the twins on clarinet who
                never agree on the tempo, the postman who joins on bass drum because he
                walks past every day anyway. By the festival, I knew every one of them and
                cheered for them as loudly as the crowd on screen. More musicals should
                remember that the chorus is made of people.
            """,
            ),
            (
                "Lovely romance",
                7,
                """
                The love story between Nell and Arlo is sweet and old-fashioned, with a lot
                of shy glances and one stunning duet on the lighthouse stairs. It's not the
                most original romance, but the actors have such lovely chemistry that it
                works. A little long but very charming.
            """,
            ),
            (
                "Not a musical person",
                3,
                """
                I went because my partner loves musicals, and I tried. I really did. But
                people bursting into song about fishing nets is just not my thing. The
                dancing was impressive, I'll admit, and the colors are pretty. Everything
                else left me cold.
            """,
            ),
            (
                "Catchy as anything",
                9,
                """
                The title song is an earworm of the highest order. So is the fish market
                number. So is the one about the broken trumpet. I've listened to the
                soundtrack every day this week. The songwriter knows how to write a hook,
                and the arrangements with horns everywhere are irresistible.
            """,
            ),
            (
                "Top-tier dancing",
                9,
                """
                As a dancer, I was blown away. The choreography mixes classic tap with some
                modern touches, and the group numbers are incredibly precise. The fish market
                routine with the crates and the nets is clever and athletic. This is a movie
                made by people who truly love dance.
            """,
            ),
            (
                "Mixed feelings",
                6,
                """
                The big numbers are spectacular and the smaller scenes are flat. Whenever
                people stop singing, the dialogue is stiff and the pacing slows to a crawl.
                The villain, a rich hotel owner who wants to cancel the festival, is a
                paper-thin cartoon. The finale makes up for a lot, though.
            """,
            ),
            (
                "That solo",
                9,
                """
                When Nell sings alone in the lighthouse with only the beam sweeping across
                her face, the whole theater went quiet. It's the emotional high point of the
                film, and the actress pours everything into it. I got goosebumps. The rest is
                charming, but that song is extraordinary.
            """,
            ),
            (
                "Sugary fluff",
                4,
                """
                Pleasant, colorful, utterly weightless. I won't remember any of it in a
                month. The songs are fine, the dancing is good, but there's no emotional
                stake to hold onto. It's the cinematic equivalent of a seaside ice cream:
                nice while it lasts, gone the moment you walk away.
            """,
            ),
            (
                "Fantastic last number",
                9,
                """
                The festival finale, with every character, every instrument and what seems
                like the entire town marching along the harbor wall, is pure, overwhelming
                happiness. It brings back melodies from every earlier song and ties them
                together. I stood up and clapped in the theater, which I have never done
                before.
            """,
            ),
            (
                "Good for families",
                7,
                """
                Took the kids and they loved the tuba player and the dog who howls along with
                the band. Clean, sweet, and colorful. Some of the adult humor went over their
                heads, some of the songs went on a bit long for them, but overall a great
                family outing.
            """,
            ),
            (
                "Vocals are uneven",
                5,
                """
                The lead is a fantastic singer. Her love interest, unfortunately, is not.
                He's a great dancer, but his solos are flat and breathy, and their duets are
                lopsided. Casting a dancer who can't sing in a musical is a strange choice.
                Looks lovely, sounds half lovely.
            """,
            ),
            (
                "So colorful",
                8,
                """
                Candy-colored in the best way: teal boats, pink houses, orange lanterns
                strung across the square. The cinematography embraces the artifice like the
                old studio musicals did. It's a visual feast, and the music is almost as good
                as the images.
            """,
            ),
            (
                "The lyrics are clever",
                8,
                """
                Pay attention to the words! The songs are full of witty wordplay, nautical
                puns and little callbacks. The number where the band members argue in rhyme
                about who is the worst player is a comic gem. I appreciate a musical whose
                lyrics aren't just filler.
            """,
            ),
            (
                "Predictable but fun",
                6,
                """
                You know exactly how this is going to end from the first scene. The shy girl
                finds her voice, the band wins, love conquers all. But the journey is so
                bright and tuneful that I didn't mind much. Not deep, not original, still
                enjoyable.
            """,
            ),
            (
                "Old-fashioned in a bad way",
                3,
                """
                The gender roles and the jokes feel like they were lifted straight from 1955
                without any thought. The women exist to sing about the men. The plot is a
                clothesline for songs. I wanted a modern take on the classic musical and got
                a dusty imitation.
            """,
            ),
            (
                "Tap heaven",
                9,
                """
                I didn't know how much I missed proper tap dancing in movies until this. The
                rhythm sequences are thrilling, especially the duel between Arlo and the
                hotel owner's nephew on the dance floor. Every tap is crisp and audible. Pure
                craft.
            """,
            ),
            (
                "Charming small-town setting",
                7,
                """
                The seaside village is a character in itself: the fish market, the harbor,
                the bandstand on the cliff, the lighthouse at the end of the point. It's a
                place you'd want to visit. The story is thin, but spending two hours in that
                town is a pleasure.
            """,
            ),
            (
                "Too long",
                5,
                """
                Two hours and twenty minutes for a story this simple is too much. Several
                songs could be cut without losing anything, and the romance subplot repeats
                the same beats three times. The good parts are really good, but I was
                restless by the end.
            """,
            ),
            (
                "Heartwarming",
                8,
                """
                A gentle, generous film about a community coming together through music. The
                tuba player's song about his late wife made me tear up. The movie has a big
                heart and isn't afraid to show it. The kind of film you watch on a grey
                Sunday to feel better.
            """,
            ),
            (
                "Solid musical",
                7,
                """
                Great numbers, great dancers, a wonderful lead voice, weak dialogue and a
                predictable plot. If you love musicals, you'll have a great time. If you
                don't, this one probably won't convert you, but it might make you tap your
                foot once or twice.
            """,
            ),
        ),
    },
    # ------------------------------------------------------------------ m6
    {
        "movie": "kerrow_bridge",
        "title": "The Bridge at Kerrow",
        "genre": "war film",
        "plot": (
            "In the last winter of an invented war, Sergeant Ilsa Maren and eight soldiers "
            "must hold a stone bridge over a freezing river for three days until "
            "reinforcements arrive, if they ever do."
        ),
        "ground_truth": [
            ("battle scenes", 530, 28),
            ("realism", 488, 35),
            ("brotherhood", 455, 19),
            ("sacrifice", 420, 22),
            ("anti-war", 402, 41),
            ("cinematography", 380, 15),
            ("sound design", 361, 13),
            ("violence", 344, 50),
            ("tension", 320, 18),
            ("siege", 287, 14),
            ("sergeant", 250, 11),
            ("indistinct characters", 241, 33),
            ("heroism", 225, 38),
            ("shaky camera", 210, 52),
            ("trenches", 190, 12),
            ("survival", 181, 10),
            ("bridge", 175, 6),
            ("emotional", 160, 20),
            ("letters home", 150, 9),
            ("score", 141, 17),
            ("graphic", 130, 40),
            ("runtime", 112, 22),
            ("ending", 104, 19),
            ("propaganda", 91, 25),
            ("winter", 84, 5),
            ("war movie", 70, 4),
        ],
        "reviews": _reviews(
            (
                "Harrowing",
                9,
                """
                I've seen a lot of war movies and this is among the most intense. The
                fighting on the bridge is chaotic and terrifying, shot close to the ground so
                you never get a clear picture of the enemy. By the third day of the siege I
                was exhausted just watching. Not entertainment in the usual sense, but
                essential.
            """,
            ),
            (
                "Too much handheld",
                4,
                """
                I get that handheld camerawork is supposed to feel immersive, but I genuinely
                felt seasick. During the big assault on the second night I couldn't tell who
                was shooting at whom. The quiet scenes in between are strong, and the
                sergeant is a great character, but the action is a blur.
            """,
            ),
            (
                "Brothers in arms",
                9,
                """
                The heart of the film is the bond between the nine soldiers. They bicker,
                share cigarettes, read each other's letters, and protect each other without
                hesitation. When the first of them dies, it hurts because we've spent real
                time with him. This is the best depiction of comradeship I've seen since the
                classics. I especially loved the small rituals they invent to survive: the
                card game that never finishes, the nicknames, the way the oldest private
                shaves every morning no matter what is happening on the other bank. None of
                it is sentimental. Nobody gives a speech about loyalty; they just keep
                handing each other dry socks. By the third night, when the squad is down to
                four, the silence at their little fire says more than any dialogue could.
                The battle scenes are spectacular, but it's these men and women, and the way
                they look after one another, that I'll remember. See it with someone you
                trust.
            """,
            ),
            (
                "Glorifies nothing, thank goodness",
                8,
                """
                There is no glory in this film. No heroic slow motion, no swelling music as
                someone charges the enemy. Death comes randomly and pointlessly, and the
                bridge they're defending turns out not to matter. It's a bleak, honest
                statement about the waste of war, and I respect it enormously.
            """,
            ),
            (
                "Couldn't tell them apart",
                5,
                """
                Nine soldiers in identical grey coats, covered in mud, with helmets on, in
                the dark. I honestly couldn't keep track of who was who, which made some of
                the deaths confusing rather than sad. The sergeant and the young radio
                operator are memorable; the rest blurred together.
            """,
            ),
            (
                "Visually stunning",
                8,
                """
                The camerawork is breathtaking in a grim way: the grey river, the snow
                turning black with ash, the burning village glowing on the horizon at night.
                Every shot looks like a war photograph. It's beautiful and awful at the same
                time, which is exactly right.
            """,
            ),
            (
                "The sound!",
                9,
                """
                Turn it up loud. The whistle of incoming shells, the crack of rifles echoing
                off the stone, the ringing in a soldier's ears after an explosion, it's
                immersive and frightening. I flinched in my seat more than once. The audio
                team has made the war feel physically present.
            """,
            ),
            (
                "Too violent for me",
                4,
                """
                I know war is violent, but the camera lingers on wounds and amputations far
                longer than it needs to. At some point it stops being honest and starts being
                exploitative. The story of the squad is moving, but I had to look away so
                often I missed parts of it.
            """,
            ),
            (
                "They gave everything",
                10,
                """
                The final half hour, as the survivors make their decision about the bridge,
                is one of the most moving things I've ever seen in a cinema. No speeches,
                just tired people doing what they think is right. I sat through the entire
                credits in silence, and so did most of the audience.
            """,
            ),
            (
                "Relentless",
                8,
                """
                Even the quiet moments are tense. Every time the soldiers eat or sleep,
                you're waiting for the next attack. The film is structured around the three
                days of the siege, and the dread builds as the ammunition runs out and the
                river freezes over. Gripping from start to finish.
            """,
            ),
            (
                "Good but long",
                6,
                """
                Powerful scenes, great performances, but it's two and a half hours and it
                feels like it. The second day in particular repeats a lot of the first day's
                beats. A tighter edit would have made it even more devastating. Still worth
                seeing on a big screen.
            """,
            ),
            (
                "Sergeant Maren",
                9,
                """
                The actress playing Sergeant Maren gives a stunning, restrained performance.
                She barely raises her voice, but you can see the weight of every order on her
                face. The scene where she writes to the families of the fallen, one letter
                after another by candlelight, is unforgettable.
            """,
            ),
            (
                "Not realistic",
                4,
                """
                I served, and some things here are just wrong. Nobody would defend a position
                like that, the weapons handling is sloppy, and soldiers don't give long
                philosophical speeches under fire. It's well shot, but the authenticity
                everyone praises is mostly surface: mud and blood, not how soldiers actually
                behave.
            """,
            ),
            (
                "A plea for peace",
                10,
                """
                This film makes war look exactly as it should: stupid, cruel and wasteful.
                The enemy soldiers are never demonized; in one extraordinary scene, a wounded
                enemy boy and one of the squad share water under the bridge. It's a plea for
                peace disguised as a combat movie.
            """,
            ),
            (
                "Brutal",
                7,
                """
                Brutal, grim, and hard to watch, but that's clearly the intention. The combat
                sequences are some of the most convincing I've seen. I didn't always feel
                connected to the characters, and the ending is abrupt, but it's a serious,
                well-crafted film that deserves attention.
            """,
            ),
            (
                "Where's the story?",
                5,
                """
                It's basically two hours of fighting with some short breaks for letters
                home. I was impressed by the technical work, but there's little narrative
                beyond 'hold the bridge'. Character arcs are minimal. As an experience it's
                strong, as a story it's thin.
            """,
            ),
            (
                "Letters to his mother",
                8,
                """
                The film is framed by the letters the young soldier writes to his mother,
                read in voiceover. They start hopeful and get shorter and darker as the siege
                goes on. It's a simple device, but it gives the chaos a human voice and it
                made me cry at the end.
            """,
            ),
            (
                "The cold",
                8,
                """
                The cold is practically a character. Frozen fingers that can't load a rifle,
                breath clouds giving away positions, the river slowly icing over so the enemy
                can cross on foot. Using the weather as the ticking clock is a clever choice,
                and the snowy photography is gorgeous.
            """,
            ),
            (
                "Overwhelming",
                7,
                """
                It's a lot. The noise, the violence, the relentless misery. I respect it, I
                think it's very well made, but I'm not sure I enjoyed it, and I'm not sure I
                was supposed to. A film to see once, carefully, and then think about for a
                long time.
            """,
            ),
            (
                "Brave and heartbreaking",
                9,
                """
                Despite its grim tone, the film finds real courage in its characters: the
                medic who keeps running into the open, the cook who volunteers for the last
                patrol. Not action-hero bravery, but the quiet kind. I found it deeply moving
                and I'll be recommending it to everyone.
            """,
            ),
            (
                "Flag-waving in disguise?",
                4,
                """
                Everyone calls this a pacifist film, but I found the final scenes, with the
                flag raised over the bridge and the rousing music, suspiciously close to
                patriotic cheerleading. The film wants it both ways: war is hell, but our
                soldiers are noble martyrs. Technically brilliant, thematically muddled.
            """,
            ),
            (
                "Mud and rats",
                8,
                """
                The dugouts on the riverbank are incredibly detailed. Water pooling in the
                mud, rats, makeshift stoves, soldiers sleeping sitting up. The film shows the
                boring, filthy reality of war as much as the fighting, and that makes the
                fighting scarier when it comes.
            """,
            ),
            (
                "Incredible music",
                8,
                """
                The music is sparse, mostly a single cello and low drums, and it's used with
                restraint. The cello theme during the funeral on the ice is heartbreaking.
                Most war films drown their scenes in music; this one lets the silence do the
                work and brings the score in only when it counts.
            """,
            ),
            (
                "Great but exhausting",
                7,
                """
                Technically superb and emotionally draining. The battle on the second night
                is one of the most intense sequences I've seen. I just wish there had been a
                little more breathing room and a little more character work. By the end, I
                was numb rather than moved.
            """,
            ),
            (
                "Not for everyone",
                6,
                """
                If you want an exciting action movie, this isn't it. It's grim, slow in
                places, and very violent. If you want an honest, sobering portrait of
                soldiers under siege, it delivers. I admired it, my friend hated it, and I
                think both reactions are fair.
            """,
            ),
            (
                "Cut to black",
                5,
                """
                Everything builds toward the final stand, and then it cuts to black before we
                see what happens. I understand the artistic choice, but after two and a half
                hours of investment, I wanted some resolution. A frustrating finish to an
                otherwise powerful film.
            """,
            ),
            (
                "Staying alive",
                8,
                """
                At its core it's about staying alive: finding food, staying warm, keeping
                your mind together. The young radio operator slowly losing his grip is one of
                the most believable portrayals of shell shock I've seen. The film is as much
                about inner battles as outer ones.
            """,
            ),
            (
                "Masterfully made",
                9,
                """
                Every department is working at the highest level: the camera, the sound
                mixing, the costumes, the makeup, the production design of the ruined bridge.
                It's a technical triumph and, more importantly, a deeply human film. One of
                the best war movies of the decade.
            """,
            ),
            (
                "Emotional wreck",
                9,
                """
                I'm not a crier, but I cried three times. The radio operator's last
                transmission. The sergeant reading the final letter. The shot of the empty
                bridge in spring. The film earns every tear through patient, honest
                storytelling. Bring tissues and prepare to be quiet on the drive home.
            """,
            ),
            (
                "Solid war film",
                7,
                """
                Strong performances, intense and realistic combat, beautiful bleak
                photography. The characters could have been better developed, and the
                handheld camera gets too frantic during the night battles. Overall it's a
                serious and effective war drama that's well worth your time on a big screen.
            """,
            ),
        ),
    },
]


def review_id(movie_index: int, review_index: int) -> str:
    """The review id for the 1-based movie and review positions: (1, 7) -> "m1-r07"."""
    return f"m{movie_index}-r{review_index:02d}"
